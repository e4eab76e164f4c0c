// Runs one corpus file (tests/data/hostile/<kind>/<file>) through the reader an import would use
// and checks it against its line of MANIFEST.tsv (tests/data/scripts/make_hostile.py):
//  - `text`: exactly one FormatError whose message contains `text` and names where (a byte
//    offset "byte N" or a line "line N");
//  - `= message`: exactly one FormatError whose whole message, location included, is `message`;
//  - `accepted: summary`: the snapshot reads and imports (storage::tracesFromSnapshot) without
//    error, and the imported traces are exactly `summary` (summarize() below, as make_hostile.py
//    computes it with Python).
// A crash, hang (CTest's 10 s timeout), or an outcome other than the expected one fails the case.
// Usage: formats_hostile_case <hostile-dir> <kind>/<file>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "allocator/replay/RecordedTrace.h"
#include "storage/formats/FormatError.h"
#include "storage/formats/RmmCsvReader.h"
#include "storage/formats/SnapshotReader.h"
#include "storage/import/FrameLine.h"
#include "storage/import/TraceImport.h"

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

bool startsWith(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

// "accepted: device 0: entries 5, segments 1, pools (0,0) (0,1), unknown lines 2, phases 2; device 1: ..."
// Pools are the distinct pool ids of the final segments (only when there are segments); unknown
// lines count the frames with an unknown line over the trace's distinct stacks; phases the
// record_function marks placed. Zero counts of the last two are left out.
std::string summarize(const std::vector<allocscope::alloc::RecordedTrace>& traces) {
    std::string out = "accepted: ";
    for (size_t i = 0; i < traces.size(); ++i) {
        const allocscope::alloc::RecordedTrace& t = traces[i];
        const size_t segments = t.finalSegments ? t.finalSegments->size() : 0;
        out += (i ? "; device " : "device ") + std::to_string(t.device) + ": entries " + std::to_string(t.entries.size()) +
               ", segments " + std::to_string(segments);
        if (segments > 0) {
            std::set<std::pair<uint64_t, uint64_t>> pools;
            for (const auto& s : *t.finalSegments) pools.insert({s.poolId.first, s.poolId.second});
            out += ", pools";
            for (const auto& [first, second] : pools) out += " (" + std::to_string(first) + "," + std::to_string(second) + ")";
        }
        size_t unknown = 0;
        for (size_t id = 1; id < t.stacks.size(); ++id) {
            for (const auto& frame : t.stacks.stack(static_cast<uint32_t>(id))) {
                unknown += !allocscope::storage::FrameLine::known(frame.line);
            }
        }
        if (unknown > 0) out += ", unknown lines " + std::to_string(unknown);
        if (!t.phases.empty()) out += ", phases " + std::to_string(t.phases.size());
    }
    return out;
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
    const bool csv = startsWith(name, "csv/");
    const bool accepted = startsWith(expect, "accepted: ");
    if (accepted && csv) {
        std::printf("FAIL: 'accepted' expectations are for snapshots only\n");
        return 1;
    }
    int errors = 0;
    std::string message;
    std::string summary;
    try {
        if (csv) {
            allocscope::formats::RmmCsvReader::readFile(path);
        } else {
            const allocscope::formats::Snapshot snapshot = allocscope::formats::SnapshotReader::readFile(path);
            if (accepted) summary = summarize(allocscope::storage::tracesFromSnapshot(snapshot));
        }
    } catch (const FormatError& e) {
        ++errors;
        message = e.what();
        std::printf("FormatError: %s\n", e.what());
        const std::string& where = e.location();
        const bool located = where.find("byte ") != std::string::npos || where.find("line ") != std::string::npos;
        if (!located && !accepted) {
            std::printf("FAIL: the error does not name a byte offset or line\n");
            return 1;
        }
    }
    if (accepted) {
        if (errors != 0) {
            std::printf("FAIL: expected %s to read and import\n", name.c_str());
            return 1;
        }
        std::printf("%s\n", summary.c_str());
        if (summary != expect) {
            std::printf("FAIL: expected %s\n", expect.c_str());
            return 1;
        }
        std::printf("PASS\n");
        return 0;
    }
    if (errors != 1) {
        std::printf("FAIL: %s loaded without an error\n", name.c_str());
        return 1;
    }
    if (startsWith(expect, "= ")) {
        if (message != expect.substr(2)) {
            std::printf("FAIL: expected exactly \"%s\"\n", expect.substr(2).c_str());
            return 1;
        }
    } else if (message.find(expect) == std::string::npos) {
        std::printf("FAIL: expected the message to contain \"%s\"\n", expect.c_str());
        return 1;
    }
    std::printf("PASS\n");
    return 0;
}
