#pragma once
// One Python stack frame of a PyTorch memory snapshot (the dicts in a `frames` list).
#include <cstdint>
#include <optional>
#include <string>

namespace allocscope::formats {

struct SnapshotFrame {
    std::string filename;
    // std::nullopt: the line is unknown. TorchDynamo writes 2**64-1 for a frame it has no line
    // for (compiled programs); a line is only informative, so a value that does not fit int64 is
    // read as unknown instead of refusing the file, and writers put 2**64-1 back. A missing key
    // reads as 0, as before; negative lines are kept as they are.
    std::optional<int64_t> line = 0;
    std::string name;

    bool operator==(const SnapshotFrame&) const = default;
};

}  // namespace allocscope::formats
