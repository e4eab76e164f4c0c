#include "views/charts/CompareColors.h"

#include <array>

namespace allocscope::views {

QColor CompareColors::forRun(int index, Theme theme) {
    // Ordered so that the first two configs (the usual "default vs one change") differ most.
    static const std::array<QRgb, kCount> light = {0x0072B2, 0xD55E00, 0x009E73, 0xCC79A7,
                                                   0xE69F00, 0x56B4E9, 0x555555};
    static const std::array<QRgb, kCount> dark = {0x4AA8E8, 0xFF7A33, 0x2EC296, 0xE69BC8,
                                                  0xF0B020, 0x8ED0F5, 0xC8C8C8};
    const std::size_t i = static_cast<std::size_t>(((index % kCount) + kCount) % kCount);
    return QColor::fromRgb(theme == Theme::Dark ? dark[i] : light[i]);
}

}  // namespace allocscope::views
