#include "storage/session/StackTree.h"

#include <algorithm>
#include <map>

#include "storage/session/UserFrames.h"

namespace allocscope::storage {
namespace {

// Children are found by (kind, frame) while building (a map per node), then laid out in order.
enum Kind { FrameKind = 0, NoStackKind = 1, InternalOnlyKind = 2 };
struct Building {
    StackNode node;
    std::map<std::pair<int, alloc::Frame>, Building> children;
};

void add(Building& root, const alloc::Stack& stack, const LiveBlock& block, int side, const StackTree::FrameFilter& fold) {
    const auto count = [&](StackNode& node) {
        node.bytes[side] += static_cast<std::int64_t>(block.size);
        node.blocks[side] += 1;
        if (block.size > node.largestBlockSize[side]) {
            node.largestBlockSize[side] = block.size;
            node.largestBlock[side] = block.address;
        }
    };
    count(root.node);
    Building* at = &root;
    if (stack.empty()) {
        Building& none = at->children[{NoStackKind, alloc::Frame{}}];
        none.node.noStack = true;
        count(none.node);
        return;
    }
    bool kept = false;
    for (auto frame = stack.rbegin(); frame != stack.rend(); ++frame) {  // outermost caller first
        if (fold && fold(*frame)) continue;
        kept = true;
        Building& child = at->children[{FrameKind, *frame}];
        child.node.frame = *frame;
        count(child.node);
        at = &child;
    }
    if (!kept) {
        Building& internal = at->children[{InternalOnlyKind, alloc::Frame{}}];
        internal.node.internalOnly = true;
        count(internal.node);
    }
}

StackNode finish(Building& building) {
    StackNode node = std::move(building.node);
    for (auto& [key, child] : building.children) node.children.push_back(finish(child));
    std::stable_sort(node.children.begin(), node.children.end(), [](const StackNode& a, const StackNode& b) {
        const auto key = [](const StackNode& n) { return std::pair(std::max(n.bytes[1], n.bytes[0]), n.blocks[1] + n.blocks[0]); };
        return key(a) > key(b);
    });
    return node;
}

void addAll(Building& root, const std::vector<LiveBlock>& blocks, const StackTree::StackOf& stackOf, int side,
            const StackTree::FrameFilter& fold) {
    std::map<std::uint32_t, alloc::Stack> stacks;  // a stack is looked up once, however many blocks share it
    for (const LiveBlock& block : blocks) {
        auto it = stacks.find(block.stackId);
        if (it == stacks.end()) it = stacks.emplace(block.stackId, block.stackId == 0 ? alloc::Stack{} : stackOf(block.stackId)).first;
        add(root, it->second, block, side, fold);
    }
}

}  // namespace

std::string StackNode::label(bool isRoot) const {
    if (isRoot) return "all live blocks";
    if (noStack) return "no stack recorded";
    if (internalOnly) return "internal frames only";
    return UserFrames::label(frame);
}

StackNode StackTree::build(const std::vector<LiveBlock>& blocks, const StackOf& stackOf, const FrameFilter& fold) {
    Building root;
    addAll(root, blocks, stackOf, 0, fold);
    return finish(root);
}

StackNode StackTree::diff(const std::vector<LiveBlock>& before, const StackOf& stackOfBefore, const std::vector<LiveBlock>& after,
                          const StackOf& stackOfAfter, const FrameFilter& fold) {
    Building root;
    addAll(root, before, stackOfBefore, 0, fold);
    addAll(root, after, stackOfAfter, 1, fold);
    return finish(root);
}

}  // namespace allocscope::storage
