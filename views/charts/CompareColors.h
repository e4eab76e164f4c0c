#pragma once
// One colour per compared config, the same in every Compare chart, table swatch and map title:
// the Okabe–Ito colour-blind-safe hues (yellow left out: it vanishes on white), lighter
// variants on the dark theme so bars and lines keep their contrast against a dark plot.
#include <QColor>

#include "views/theme/ThemePalette.h"

namespace allocscope::views {

struct CompareColors {
    static constexpr int kCount = 7;
    // The colour of the config at `index` (cycles after kCount configs).
    static QColor forRun(int index, Theme theme);
};

}  // namespace allocscope::views
