#include "storage/import/SpilledColdBytes.h"

#include <algorithm>
#include <limits>

namespace allocscope::storage {

std::uint64_t SpilledColdBytes::append(const std::uint8_t* bytes, std::size_t n) {
    const std::size_t at = bytes_.size();
    const std::size_t threshold = alloc::spillFromBytes();
    if (!bytes_.spilled() && at + n > std::min(threshold, kSpillFromBytes) && threshold < std::numeric_limits<std::size_t>::max() / 2) {
        // A SpillArray moves into its file when asked for more room than spillFromBytes(): ask
        // for just past it. Where no file can be made it stays in memory (that room is only
        // address space until written).
        bytes_.reserve(std::max(at + n, threshold + 1));
    }
    bytes_.append(bytes, bytes + n);
    return at;
}

}  // namespace allocscope::storage
