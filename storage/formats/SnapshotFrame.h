#pragma once
// One Python stack frame of a PyTorch memory snapshot (the dicts in a `frames` list).
#include <cstdint>
#include <string>

namespace allocscope::formats {

struct SnapshotFrame {
    std::string filename;
    int64_t line = 0;
    std::string name;

    bool operator==(const SnapshotFrame&) const = default;
};

}  // namespace allocscope::formats
