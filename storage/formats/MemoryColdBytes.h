#pragma once
// The default ColdBytes: a plain growing buffer in memory. What a pickle read uses when nobody
// supplies a file-backed store (PickleReader::read, a streaming read without one): a memo's frozen
// chunks then stay in memory, at one or two bytes a slot.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "storage/formats/ColdBytes.h"

namespace allocscope::formats {

class MemoryColdBytes final : public ColdBytes {
public:
    uint64_t append(const uint8_t* bytes, std::size_t n) override;
    const uint8_t* data() const override { return bytes_.data(); }
    uint64_t size() const override { return bytes_.size(); }
    std::size_t heapBytes() const override { return bytes_.capacity(); }

private:
    std::vector<uint8_t> bytes_;
};

}  // namespace allocscope::formats
