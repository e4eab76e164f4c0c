// libFuzzer target: PickleReader / JsonReader + SnapshotReader on arbitrary bytes.
// Properties checked beyond "no crash, no hang, no leak" (ASan):
//  - every rejection is a FormatError that names where (a byte offset or a line);
//  - whatever loads survives PickleWriter -> SnapshotReader unchanged (the writer round trip).
// Built by scripts/fuzz (clang++ -fsanitize=fuzzer,address), outside CMake.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "storage/formats/FormatError.h"
#include "storage/formats/PickleWriter.h"
#include "storage/formats/SnapshotReader.h"

using namespace allocscope::formats;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    Snapshot snapshot;
    try {
        snapshot = SnapshotReader::read(bytes);
    } catch (const FormatError& e) {
        const std::string& where = e.location();
        if (where.find("byte ") == std::string::npos && where.find("line ") == std::string::npos) {
            std::fprintf(stderr, "FormatError without a location: %s\n", e.what());
            std::abort();
        }
        return 0;
    }
    // NaN != NaN would make the equality below fail for a value that did round-trip.
    const auto& gc = snapshot.allocator_settings.garbage_collection_threshold;
    if (gc && std::isnan(*gc)) return 0;
    try {
        if (!(SnapshotReader::read(PickleWriter::write(snapshot)) == snapshot)) {
            std::fprintf(stderr, "PickleWriter round trip changed the snapshot\n");
            std::abort();
        }
    } catch (const FormatError& e) {
        std::fprintf(stderr, "PickleWriter output rejected: %s\n", e.what());
        std::abort();
    }
    return 0;
}
