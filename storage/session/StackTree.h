#pragma once
// Bytes by call stack: the live blocks of a point of a run folded into a tree of frames, caller to
// callee (the outermost frame of a stack is a child of the root, the allocation site a leaf).
// PyTorch lists a block's frames innermost first; the tree reverses them. Blocks whose stack was
// not recorded hang under one "no stack recorded" child of the root.
//
// A tree can hold two sides (`before` and `after`): the same tree built from two sets of blocks
// (two events of one run, or one point of two runs), so a diff is the tree with both sides and
// each node's change after - before.
//
// A frame filter folds frames away (the GUI's "hide PyTorch internals"): a stack keeps only the
// frames the filter lets through, caller to callee; a stack with none left hangs under one
// "internal frames only" child of the root. Without a filter every frame is kept.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "allocator/core/StackTable.h"
#include "storage/session/LiveBlocks.h"

namespace allocscope::storage {

struct StackNode {
    alloc::Frame frame;     // empty filename and name for the root and "no stack recorded"
    bool noStack = false;   // the child that gathers blocks recorded without frames
    bool internalOnly = false;  // the child that gathers stacks whose every frame was folded away
    std::int64_t bytes[2] = {0, 0};   // block bytes under this node: [0] before (or the only side), [1] after
    std::int64_t blocks[2] = {0, 0};
    // The largest block under this node on each side (address, size): what a click on the node
    // selects. Size 0: no block on that side.
    std::uint64_t largestBlock[2] = {0, 0};
    std::uint64_t largestBlockSize[2] = {0, 0};
    std::vector<StackNode> children;  // largest first (by the last side's bytes, then the first's)

    std::int64_t deltaBytes() const { return bytes[1] - bytes[0]; }
    std::int64_t deltaBlocks() const { return blocks[1] - blocks[0]; }
    // "name (file:line)", "no stack recorded", "internal frames only", or "all live blocks" for the root.
    std::string label(bool isRoot = false) const;
};

class StackTree {
public:
    using StackOf = std::function<alloc::Stack(std::uint32_t stackId)>;
    using FrameFilter = std::function<bool(const alloc::Frame&)>;  // true: fold the frame away
    // One side: the blocks' bytes by stack, in bytes[0] / blocks[0].
    static StackNode build(const std::vector<LiveBlock>& blocks, const StackOf& stackOf, const FrameFilter& fold = {});
    // Two sides in one tree; nodes present on one side only count 0 on the other.
    static StackNode diff(const std::vector<LiveBlock>& before, const StackOf& stackOfBefore,
                          const std::vector<LiveBlock>& after, const StackOf& stackOfAfter, const FrameFilter& fold = {});
};

}  // namespace allocscope::storage
