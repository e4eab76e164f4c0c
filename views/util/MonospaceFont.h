#pragma once
// A fixed-pitch font for memory_summary() text and config strings. The platform's "fixed" system
// font is not always fixed-pitch (the offscreen and minimal platforms report a proportional one),
// and a 77-column table must line up.
#include <QFont>

namespace allocscope::views {

struct MonospaceFont {
    static QFont font();
};

}  // namespace allocscope::views
