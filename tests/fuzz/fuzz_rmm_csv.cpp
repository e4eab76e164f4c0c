// libFuzzer target: RmmCsvReader (+ RmmLogValidator) on arbitrary bytes.
// Properties beyond "no crash, no hang" (ASan): every rejection names a line; whatever loads is
// written by RmmCsvWriter and read back to the same records (line numbers aside).
// Built by scripts/fuzz (clang++ -fsanitize=fuzzer,address), outside CMake.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "storage/formats/FormatError.h"
#include "storage/formats/RmmCsvReader.h"
#include "storage/formats/RmmCsvWriter.h"

using namespace allocscope::formats;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    RmmLog log;
    try {
        log = RmmCsvReader::read(text);
    } catch (const FormatError& e) {
        if (e.location().rfind("line ", 0) != 0) {
            std::fprintf(stderr, "FormatError without a line: %s\n", e.what());
            std::abort();
        }
        return 0;
    }
    try {
        RmmLog back = RmmCsvReader::read(RmmCsvWriter::write(log));
        if (back.records.size() != log.records.size()) std::abort();
        for (size_t i = 0; i < log.records.size(); ++i) {
            back.records[i].line = log.records[i].line;
            if (!(back.records[i] == log.records[i])) {
                std::fprintf(stderr, "RmmCsvWriter round trip changed record %zu\n", i);
                std::abort();
            }
        }
    } catch (const FormatError& e) {
        std::fprintf(stderr, "RmmCsvWriter output rejected: %s\n", e.what());
        std::abort();
    }
    return 0;
}
