#include "storage/formats/MemoryColdBytes.h"

namespace allocscope::formats {

uint64_t MemoryColdBytes::append(const uint8_t* bytes, std::size_t n) {
    const uint64_t at = bytes_.size();
    bytes_.insert(bytes_.end(), bytes, bytes + n);
    return at;
}

}  // namespace allocscope::formats
