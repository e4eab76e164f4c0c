#pragma once
// A stack frame's line number once it has left the snapshot: alloc::Frame::line is a plain
// int64, with no "unknown" of its own (allocator/ knows nothing of file formats), but a snapshot
// frame's line may be unknown (formats::SnapshotFrame: TorchDynamo writes 2**64-1 for a frame it
// has no line for). An unknown line therefore travels through the import, the session database
// (frame.line) and the exports as the value kUnknown, and everything that prints a frame asks
// text() instead of printing the number: "file.py:?".
//
// Why INT64_MIN: no source file has that line, PyTorch's negative lines (-1 and the like) stay
// what they are, and the session schema (`line INTEGER NOT NULL`) needs no change. A snapshot
// whose frame really says -2**63 is read as unknown by this convention, which loses nothing a
// user could act on.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

namespace allocscope::storage {

class FrameLine {
public:
    static constexpr std::int64_t kUnknown = std::numeric_limits<std::int64_t>::min();

    // formats::SnapshotFrame::line -> alloc::Frame::line.
    static std::int64_t fromSnapshot(const std::optional<std::int64_t>& line) { return line ? *line : kUnknown; }
    // alloc::Frame::line -> formats::SnapshotFrame::line (an export writes 2**64-1 for unknown).
    static std::optional<std::int64_t> toSnapshot(std::int64_t line) {
        return line == kUnknown ? std::nullopt : std::optional<std::int64_t>(line);
    }
    static bool known(std::int64_t line) { return line != kUnknown; }
    // "123", or "?" for an unknown line: what a frame prints after "file:".
    static std::string text(std::int64_t line) { return known(line) ? std::to_string(line) : std::string("?"); }
};

}  // namespace allocscope::storage
