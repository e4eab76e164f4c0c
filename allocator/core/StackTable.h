#pragma once
// Stacks de-duplicated: each distinct list of frames gets a small id (0 = "no stack"). Events,
// blocks and segments carry only the id.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace allocscope::alloc {

struct Frame {
    std::string filename;
    std::int64_t line = 0;
    std::string name;
    auto operator<=>(const Frame&) const = default;
};

using Stack = std::vector<Frame>;

class StackTable {
public:
    StackTable() { stacks_.emplace_back(); }  // id 0: the empty stack
    std::uint32_t intern(const Stack& stack) {
        if (stack.empty()) return 0;
        auto [it, inserted] = ids_.try_emplace(stack, static_cast<std::uint32_t>(stacks_.size()));
        if (inserted) stacks_.push_back(stack);
        return it->second;
    }
    const Stack& stack(std::uint32_t id) const { return stacks_.at(id); }
    std::size_t size() const { return stacks_.size(); }

private:
    std::vector<Stack> stacks_;
    std::map<Stack, std::uint32_t> ids_;
};

}  // namespace allocscope::alloc
