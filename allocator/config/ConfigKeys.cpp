#include "allocator/config/ConfigKeys.h"

namespace allocscope::alloc {
namespace {

using K = ConfigValueKind;

const std::vector<ConfigKeySpec>& table() {
    static const std::vector<ConfigKeySpec> keys{
        {"backend", K::Backend, true, false, "", "native or cudaMallocAsync"},
        {"large_segment_size_mb", K::MiB, false, true, "", "an integer number of MiB > 10"},
        {"max_split_size_mb", K::MiB, false, true, "", "an integer number of MiB >= the large segment size (20)"},
        {"max_non_split_rounding_mb", K::MiB, false, true, "",
         "an integer number of MiB >= the large segment size (20)"},
        {"roundup_power2_divisions", K::Roundup, false, true, "",
         "a power of 2, or a list [MiB:divisions,...,>:divisions] with power-of-2 keys and power-of-2 or 0 values"},
        {"garbage_collection_threshold", K::Fraction, false, true, "", "a fraction in (0.0, 1.0), e.g. 0.6"},
        {"expandable_segments", K::Bool, false, true, "", "True or False"},
        {"release_lock_on_cudamalloc", K::Bool, true, true, "", "True or False"},
        {"graph_capture_record_stream_reuse", K::Bool, true, true, "", "True or False"},
        {"per_process_memory_fraction", K::Fraction, true, false, "", "a fraction in [0.0, 1.0]"},
        {"pinned_use_cuda_host_register", K::Bool, true, false, "", "True or False"},
        {"pinned_num_register_threads", K::Count, true, false, "", "a power of 2 <= 128"},
        {"pinned_use_background_threads", K::Bool, false, false, "", "True or False"},
        {"pinned_reserve_segment_size_mb", K::MiB, true, false, "", "an integer number of MiB > 0"},
    };
    return keys;
}

const std::vector<ConfigKeySpec>& aliases() {
    static const std::vector<ConfigKeySpec> keys{
        {"release_lock_on_hipmalloc", K::Bool, true, true, "release_lock_on_cudamalloc", "True or False"},
        {"pinned_use_hip_host_register", K::Bool, true, false, "pinned_use_cuda_host_register", "True or False"},
    };
    return keys;
}

}  // namespace

const std::vector<ConfigKeySpec>& ConfigKeys::all() { return table(); }

const ConfigKeySpec* ConfigKeys::find(std::string_view key) {
    for (const ConfigKeySpec& spec : table()) {
        if (spec.name == key) return &spec;
    }
    for (const ConfigKeySpec& spec : aliases()) {
        if (spec.name == key) return &spec;
    }
    return nullptr;
}

std::optional<std::string_view> ConfigKeys::laterVersionNote(std::string_view key) {
    struct Later {
        std::string_view key;
        std::string_view note;
    };
    static const Later later[] = {
        {"throw_on_cudamalloc_oom", "throw_on_cudamalloc_oom was added after PyTorch 2.11 (PR #179473); 2.11 rejects it"},
        {"expandable_segments_reserve", "expandable_segments_reserve was added after PyTorch 2.11; 2.11 rejects it"},
        {"expandable_segments_reserve_by_class",
         "expandable_segments_reserve_by_class was added after PyTorch 2.11; 2.11 rejects it"},
        {"pinned_free_catch_all", "pinned_free_catch_all was added after PyTorch 2.11; 2.11 rejects it"},
        {"pinned_max_round_threshold_mb", "pinned_max_round_threshold_mb was added after PyTorch 2.11; 2.11 rejects it"},
        {"pinned_max_cached_size_mb", "pinned_max_cached_size_mb was added after PyTorch 2.11; 2.11 rejects it"},
        {"expandable_segments_handle_type",
         "expandable_segments_handle_type is an internal setting that appears in PyTorch's code and messages, not "
         "a config option"},
    };
    for (const Later& l : later) {
        if (l.key == key) return l.note;
    }
    return std::nullopt;
}

}  // namespace allocscope::alloc
