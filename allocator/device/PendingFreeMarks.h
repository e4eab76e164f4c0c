#pragma once
// The blocks whose free waits for marks on several use streams (StreamFreeQueue): a block used
// on streams A and B is free to reuse only once both have passed its free, whichever passes
// first. CUDA-free, tested without a GPU (test_stream_free_rules).
#include <cstddef>
#include <cstdint>
#include <unordered_map>

namespace allocscope::alloc {

class PendingFreeMarks {
public:
    // The free of the block at `address` waits for `marks` (> 1) marks.
    void expect(std::uint64_t address, std::uint32_t marks) { left_[address] += marks; }
    // One of its marks passed; true when that was the last one (the block is then forgotten).
    // An address never expected is a single-stream block: its only mark was the last.
    bool passed(std::uint64_t address) {
        const auto it = left_.find(address);
        if (it == left_.end()) return true;
        if (--it->second > 0) return false;
        left_.erase(it);
        return true;
    }
    std::size_t size() const { return left_.size(); }
    void clear() { left_.clear(); }

private:
    std::unordered_map<std::uint64_t, std::uint32_t> left_;
};

}  // namespace allocscope::alloc
