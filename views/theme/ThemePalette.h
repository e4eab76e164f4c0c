#pragma once
// Every colour the custom-painted views use, per theme. Qt 6.4 has no colour-scheme API, so the
// theme is read from the active QPalette (a dark window colour means the Dark table) and state
// colours come from fixed, colour-blind-safe tables (Okabe–Ito hues: blue / sky blue / orange /
// reddish purple, plus grey for unmapped pages, which is also hatched so it never relies on hue).
#include <QColor>
#include <QPalette>

#include <array>

#include "views/data/HeatmapData.h"
#include "views/data/SegmentMapData.h"
#include "views/data/TimelineData.h"

class QApplication;

namespace allocscope::views {

enum class Theme { Light, Dark };
enum class ThemeChoice { System, Light, Dark };

struct ThemePalette {
    Theme theme = Theme::Light;
    QColor requested;      // allocated bytes the program asked for
    QColor roundingWaste;  // allocated beyond the request
    QColor inactive;       // cached, free
    QColor pendingFree;
    QColor unmapped;       // unmapped pages (base colour)...
    QColor unmappedHatch;  // ...and the hatch lines drawn over it
    QColor unreserved;     // heatmap: address space not reserved at that time
    QColor cursor;         // current-event cursor (heatmap, timeline)
    QColor selection;      // selected block outline
    QColor highlight;      // blocks matching a search (outlines; bright, unlike selection and states)
    QColor gapMarker;      // squeezed address gap marker
    QColor blockBorder;    // separator between adjacent blocks
    QColor phaseShade;     // timeline phases (translucent)
    std::array<QColor, kTimelineMetricCount> metric;  // timeline lines
    QColor fragmentation;
    std::array<QColor, kMarkerKindCount> marker;
    // Derived from the QPalette it was made for.
    QColor text;
    QColor mutedText;
    QColor grid;
    QColor background;

    static ThemePalette light();
    static ThemePalette dark();
    // The table that matches `palette` (dark window colour -> Dark), with text/grid/background
    // taken from it.
    static ThemePalette forPalette(const QPalette& palette);
    static bool isDark(const QPalette& palette);

    QColor heatColor(HeatState state) const;
    QColor blockColor(BlockState state) const;  // the fill of a block (allocated: the requested part)
};

// Applies a theme to the whole application: Light and Dark install the Fusion style with a
// matching palette; System restores the style and palette the application started with.
// Existing widgets pick the new palette up through posted events (the next event-loop turn);
// the views repaint with the matching table when their PaletteChange arrives.
void applyTheme(QApplication& app, ThemeChoice choice);

}  // namespace allocscope::views
