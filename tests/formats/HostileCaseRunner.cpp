// Runs one hostile corpus file (tests/data/hostile/<kind>/<file>) through the reader an import
// would use and passes only when that ends in exactly one FormatError which
//  - contains the text MANIFEST.tsv expects for this file, and
//  - names where: a byte offset ("byte N") or a line ("line N").
// A crash, hang (CTest's 10 s timeout), or a file that loads fails the case.
// Usage: formats_hostile_case <hostile-dir> <kind>/<file>
#include <cstdio>
#include <fstream>
#include <string>

#include "storage/formats/FormatError.h"
#include "storage/formats/RmmCsvReader.h"
#include "storage/formats/SnapshotReader.h"

using allocscope::formats::FormatError;

namespace {

bool expectationFor(const std::string& dir, const std::string& name, std::string& expect) {
    std::ifstream manifest(dir + "/MANIFEST.tsv");
    std::string line;
    while (std::getline(manifest, line)) {
        const size_t tab = line.find('\t');
        if (tab != std::string::npos && line.compare(0, tab, name) == 0 && tab == name.size()) {
            expect = line.substr(tab + 1);
            return true;
        }
    }
    return false;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s <hostile-dir> <kind>/<file>\n", argv[0]);
        return 2;
    }
    const std::string dir = argv[1];
    const std::string name = argv[2];
    std::string expect;
    if (!expectationFor(dir, name, expect)) {
        std::printf("FAIL: %s is not listed in %s/MANIFEST.tsv (re-run tests/data/scripts/make_hostile.py)\n",
                    name.c_str(), dir.c_str());
        return 1;
    }
    const std::string path = dir + "/" + name;
    int errors = 0;
    std::string message;
    try {
        if (name.rfind("csv/", 0) == 0) {
            allocscope::formats::RmmCsvReader::readFile(path);
        } else {
            allocscope::formats::SnapshotReader::readFile(path);
        }
    } catch (const FormatError& e) {
        ++errors;
        message = e.what();
        std::printf("FormatError: %s\n", e.what());
        const std::string& where = e.location();
        const bool located = where.find("byte ") != std::string::npos || where.find("line ") != std::string::npos;
        if (!located) {
            std::printf("FAIL: the error does not name a byte offset or line\n");
            return 1;
        }
    }
    if (errors != 1) {
        std::printf("FAIL: %s loaded without an error\n", name.c_str());
        return 1;
    }
    if (message.find(expect) == std::string::npos) {
        std::printf("FAIL: expected the message to contain \"%s\"\n", expect.c_str());
        return 1;
    }
    std::printf("PASS\n");
    return 0;
}
