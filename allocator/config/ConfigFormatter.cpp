// formatConfig(): the canonical text of an AllocatorConfig (declared in ConfigParser.h).
#include <string>
#include <vector>

#include "allocator/config/ConfigNumber.h"
#include "allocator/config/ConfigParser.h"

namespace allocscope::alloc {
namespace {

std::string mib(std::uint64_t bytes) { return std::to_string(bytes / kMiB); }

// The shortest list that PyTorch's fill rules turn back into exactly these 16 entries:
// the first key fills every lower entry, so the first run of equal values needs one key (its
// last interval); each later run needs one key per interval, except the final run, which `>`
// fills from just after the last key set.
std::string roundupList(const std::array<std::uint64_t, 16>& div) {
    struct Run {
        std::size_t begin, end;  // inclusive
        std::uint64_t value;
    };
    std::vector<Run> runs;
    for (std::size_t i = 0; i < div.size(); ++i) {
        if (!runs.empty() && runs.back().value == div[i]) {
            runs.back().end = i;
        } else {
            runs.push_back({i, i, div[i]});
        }
    }
    std::string out = "[";
    auto item = [&](const std::string& key, std::uint64_t value) {
        if (out.size() > 1) out += ",";
        out += key + ":" + std::to_string(value);
    };
    for (std::size_t r = 0; r < runs.size(); ++r) {
        const Run& run = runs[r];
        if (r == 0) {
            item(std::to_string(1ull << run.end), run.value);
        } else if (r + 1 == runs.size()) {
            item(">", run.value);
        } else {
            for (std::size_t i = run.begin; i <= run.end; ++i) item(std::to_string(1ull << i), run.value);
        }
    }
    return out + "]";
}

}  // namespace

std::string formatConfig(const AllocatorConfig& c) {
    const AllocatorConfig d;
    std::vector<std::string> parts;
    auto add = [&](const char* key, const std::string& value) { parts.push_back(std::string(key) + ":" + value); };

    if (c.backend == Backend::CudaMallocAsync) add("backend", "cudaMallocAsync");
    if (c.largeSegmentSize != d.largeSegmentSize) add("large_segment_size_mb", mib(c.largeSegmentSize));
    if (c.maxSplitSize != d.maxSplitSize) add("max_split_size_mb", mib(c.maxSplitSize));
    // Its default follows the large segment size, so compare with that, not with 20 MiB.
    if (c.maxNonSplitRounding != c.largeSegmentSize) add("max_non_split_rounding_mb", mib(c.maxNonSplitRounding));
    const auto& div = c.roundupPower2Divisions;
    bool allEqual = true;
    for (std::uint64_t v : div) allEqual = allEqual && v == div[0];
    if (!(allEqual && div[0] == 0)) {
        add("roundup_power2_divisions", allEqual ? std::to_string(div[0]) : roundupList(div));
    }
    if (c.garbageCollectionThreshold != d.garbageCollectionThreshold) {
        add("garbage_collection_threshold", formatConfigDouble(c.garbageCollectionThreshold));
    }
    if (c.expandableSegments) add("expandable_segments", "True");
    if (c.releaseLockOnCudaMalloc) add("release_lock_on_cudamalloc", "True");
    if (c.graphCaptureRecordStreamReuse) add("graph_capture_record_stream_reuse", "True");
    if (c.perProcessMemoryFraction) add("per_process_memory_fraction", formatConfigDouble(*c.perProcessMemoryFraction));
    if (c.pinnedUseCudaHostRegister) add("pinned_use_cuda_host_register", "True");
    if (c.pinnedNumRegisterThreads != d.pinnedNumRegisterThreads) {
        add("pinned_num_register_threads", std::to_string(c.pinnedNumRegisterThreads));
    }
    if (c.pinnedUseBackgroundThreads) add("pinned_use_background_threads", "True");
    if (c.pinnedReserveSegmentSizeMb != d.pinnedReserveSegmentSizeMb) {
        add("pinned_reserve_segment_size_mb", std::to_string(c.pinnedReserveSegmentSizeMb));
    }

    std::string out;
    for (const std::string& part : parts) {
        if (!out.empty()) out += ",";
        out += part;
    }
    return out;
}

}  // namespace allocscope::alloc
