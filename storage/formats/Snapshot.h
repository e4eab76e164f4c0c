#pragma once
// The data model of a PyTorch memory snapshot (torch.cuda.memory._snapshot() /
// _dump_snapshot()), as plain structs. Field names follow the dict keys PyTorch writes, so a
// reader of this header can look them up in PyTorch's docs (reference §1.3–1.8).
//
// Integers: addresses, sizes and streams are uint64_t because real files carry pointer-sized
// values and values >= 2^63 occurred in the wild (PyTorch issue #115234). A stream is the
// cudaStream_t cast to int64 by PyTorch; a negative stream in a file is kept as its
// two's-complement bit pattern. Devices, times and line numbers are int64_t (host segments use
// device -1). A value that is only informative (a frame's line, an entry's or annotation's
// time_us, an annotation's device) and does not fit int64 is read as *unknown* rather than
// refusing the file: TorchDynamo writes 2**64-1 for "no line" (see SnapshotFrame.h). Writers put
// 2**64-1 back for an unknown value. Optional keys are read by presence, never by PyTorch version:
// a key missing from the file leaves the default shown here (and the has_* flag false where one
// exists, so a writer can leave it out again).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "storage/formats/FrameList.h"
#include "storage/formats/SharedString.h"
#include "storage/formats/SnapshotFrame.h"

namespace allocscope::formats {

// A block inside a segment: blocks tile their segment in address order.
struct SnapshotBlock {
    uint64_t address = 0;  // absent in pre-2.1 files: the reader derives base + running size
    uint64_t size = 0;            // rounded size carved from the segment
    uint64_t requested_size = 0;  // what the caller asked for
    // "active_allocated", "active_pending_free" (also "active_awaiting_free" in PyTorch's
    // docstring) or "inactive"; kept exactly as in the file.
    std::string state;
    FrameList frames;  // shared with other blocks, segments and entries of the same stack

    bool operator==(const SnapshotBlock&) const = default;
};

// One cudaMalloc'd (or expandable) region at snapshot time.
struct SnapshotSegment {
    int64_t device = 0;
    uint64_t address = 0;
    uint64_t total_size = 0;
    uint64_t allocated_size = 0;
    uint64_t active_size = 0;
    uint64_t requested_size = 0;
    uint64_t stream = 0;
    std::string segment_type;  // "large" or "small"
    std::pair<uint64_t, uint64_t> segment_pool_id{0, 0};  // (0, 0) = default pool
    bool is_expandable = false;
    FrameList frames;  // shared with other blocks, segments and entries of the same stack
    std::vector<SnapshotBlock> blocks;

    bool operator==(const SnapshotSegment&) const = default;
};

// One entry of a device's ring-buffer trace (reference §1.7).
struct TraceEntry {
    // "alloc", "free_requested", "free_completed", "segment_alloc", "segment_free",
    // "segment_map", "segment_unmap", "snapshot", "oom", "annotate", "user_defined", "free"...
    // kept as the file spells it; unknown actions are not an error at this layer. The three
    // strings of an entry are SharedString (8 bytes, interned by the reader): a million entries.
    SharedString action;
    uint64_t addr = 0;
    uint64_t device_free = 0;
    // The flags sit together (not after their values): a million entries, 16 bytes of padding
    // each.
    bool has_addr = false;        // false for "oom", which carries device_free instead
    bool has_device_free = false;
    bool has_pool_id = false;     // pool_id below is in the file
    // The file's time_us did not fit int64 (time_us is then 0). A flag beside the others, not a
    // std::optional: that would add 8 bytes to each of a million entries.
    bool time_us_unknown = false;
    uint64_t size = 0;            // requested bytes for alloc/free, segment bytes for segment_*
    uint64_t stream = 0;
    int64_t time_us = 0;          // Unix-epoch microseconds (0 when the file has none or it is unknown)
    FrameList frames;  // shared with other blocks, segments and entries of the same stack
    SharedString compile_context;  // PyTorch writes "N/A" when there is none
    SharedString user_metadata;
    std::pair<uint64_t, uint64_t> pool_id{0, 0};  // newest PyTorch only (PR #177717)

    bool operator==(const TraceEntry&) const = default;
};

// allocator_settings (reference §1.8): each key is optional; std::nullopt = absent in the file.
struct AllocatorSettings {
    bool present = false;  // the file had an allocator_settings dict at all
    std::optional<std::string> conf;  // "PYTORCH_CUDA_ALLOC_CONF", the settings string
    std::optional<int64_t> max_split_size;  // -1 = unlimited (PyTorch casts SIZE_MAX)
    std::optional<double> garbage_collection_threshold;
    std::optional<bool> expandable_segments;
    std::optional<int64_t> pinned_num_register_threads;
    std::optional<bool> release_lock_on_cudamalloc;
    std::optional<bool> pinned_use_cuda_host_register;
    std::optional<bool> graph_capture_record_stream_reuse;
    std::optional<int64_t> max_round_threshold;
    std::optional<int64_t> max_cached_size;
    // Keyed by power-of-two size bucket in MiB; the file's keys are the strings "1" ... "32768".
    // Empty (and roundup_present false) when the key is absent.
    std::map<uint64_t, uint64_t> roundup_power2_divisions;
    bool roundup_present = false;

    bool operator==(const AllocatorSettings&) const = default;
};

// external_annotations: record_function START/END markers.
struct Annotation {
    std::string name;
    std::string stage;  // "START" or "END"
    std::optional<int64_t> device = 0;   // std::nullopt: unknown (did not fit int64)
    std::optional<int64_t> time_us = 0;  // std::nullopt: unknown (did not fit int64)

    bool operator==(const Annotation&) const = default;
};

struct Snapshot {
    std::vector<SnapshotSegment> segments;  // all devices mixed; filter by device
    // Indexed by device ordinal; an empty inner vector for a device without events.
    std::vector<std::vector<TraceEntry>> device_traces;
    AllocatorSettings allocator_settings;
    std::vector<Annotation> external_annotations;

    bool operator==(const Snapshot&) const = default;
};

}  // namespace allocscope::formats
