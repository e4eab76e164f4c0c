#pragma once
// The data model of a RAPIDS RMM allocation log (logging_resource_adaptor CSV):
//   Thread,Time,Action,Pointer,Size,Stream
// with the actions "allocate", "free" and "allocate failure". The shared traces' CSVs are
// PyTorch traces in this layout (alloc -> allocate, free_completed -> free, oom -> allocate
// failure with pointer 0x0).
#include <cstdint>
#include <string>
#include <vector>

namespace allocscope::formats {

enum class RmmAction { Allocate, Free, AllocateFailure };

struct RmmRecord {
    uint64_t thread = 0;
    std::string time;      // kept as written ("03:21:13.655690"); RMM does not fix a format
    RmmAction action = RmmAction::Allocate;
    uint64_t pointer = 0;  // 0 for an allocate failure
    uint64_t size = 0;
    uint64_t stream = 0;
    uint64_t line = 0;     // 1-based line in the file (the header is line 1), for messages

    bool operator==(const RmmRecord&) const = default;
};

struct RmmLog {
    std::vector<RmmRecord> records;  // in file order
};

}  // namespace allocscope::formats
