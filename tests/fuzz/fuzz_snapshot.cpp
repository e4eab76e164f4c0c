// libFuzzer target: PickleReader / JsonReader + SnapshotReader on arbitrary bytes.
// Properties checked beyond "no crash, no hang, no leak" (ASan):
//  - every rejection is a FormatError that names where (a byte offset or a line);
//  - whatever loads keeps the reader's promises to the import (SnapshotReader.h): no address
//    range runs past 2**64 (entries, segments, blocks), no segment device is below -1, and an
//    unknown time_us reads as 0;
//  - whatever loads survives PickleWriter -> SnapshotReader unchanged (the writer round trip),
//    unknown lines, times and annotation devices (TorchDynamo's 2**64-1) included.
// Built by scripts/fuzz (clang++ -fsanitize=fuzzer,address), outside CMake. Its seeds include
// the PyTorch 2.11 edge cases of the hostile corpus (compiled-program lines, pool ids, ring
// buffers that lost their beginning, several devices) and the small traces of tests/data/pools.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "storage/formats/FormatError.h"
#include "storage/formats/PickleWriter.h"
#include "storage/formats/SnapshotReader.h"

using namespace allocscope::formats;

namespace {

[[noreturn]] void broken(const char* promise) {
    std::fprintf(stderr, "SnapshotReader broke its promise: %s\n", promise);
    std::abort();
}

bool wraps(uint64_t address, uint64_t size) { return size != 0 && address > UINT64_MAX - (size - 1); }

void checkPromises(const Snapshot& snapshot) {
    for (const SnapshotSegment& seg : snapshot.segments) {
        if (seg.device < -1) broken("a segment device below -1");
        if (wraps(seg.address, seg.total_size)) broken("a segment past 2**64");
        for (const SnapshotBlock& b : seg.blocks) {
            if (wraps(b.address, b.size)) broken("a block past 2**64");
        }
    }
    for (const std::vector<TraceEntry>& trace : snapshot.device_traces) {
        for (const TraceEntry& e : trace) {
            if (e.has_addr && wraps(e.addr, e.size)) broken("a trace entry past 2**64");
            if (e.time_us_unknown && e.time_us != 0) broken("an unknown time_us that is not 0");
        }
    }
}

}  // namespace

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
    checkPromises(snapshot);
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
