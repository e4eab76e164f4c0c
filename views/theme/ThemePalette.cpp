#include "views/theme/ThemePalette.h"

#include <QApplication>
#include <QPointer>
#include <QStyle>
#include <QStyleFactory>

namespace allocscope::views {

ThemePalette ThemePalette::light() {
    ThemePalette p;
    p.theme = Theme::Light;
    p.requested = QColor(0x00, 0x72, 0xB2);      // blue
    p.roundingWaste = QColor(0x8E, 0xCD, 0xF0);  // light sky blue
    p.inactive = QColor(0xE6, 0x9F, 0x00);       // orange
    p.pendingFree = QColor(0xC0, 0x3C, 0x8C);    // reddish purple / magenta
    p.unmapped = QColor(0xD6, 0xD6, 0xD6);
    p.unmappedHatch = QColor(0x9A, 0x9A, 0x9A);
    p.unreserved = QColor(0xF7, 0xF7, 0xF7);
    p.cursor = QColor(0x10, 0x10, 0x10);
    p.selection = QColor(0xD5, 0x2B, 0x00);      // vermilion, unlike any state colour
    p.highlight = QColor(0x00, 0xB3, 0x6B);      // green: search matches
    p.gapMarker = QColor(0x60, 0x60, 0x60);
    p.blockBorder = QColor(0xFF, 0xFF, 0xFF);
    p.phaseShade = QColor(0x00, 0x00, 0x00, 16);
    p.metric = {QColor(0x00, 0x72, 0xB2), QColor(0x44, 0x44, 0x44), QColor(0x00, 0x9E, 0x73),
                QColor(0xCC, 0x79, 0xA7)};
    p.fragmentation = QColor(0xE6, 0x9F, 0x00);
    p.marker = {QColor(0xD5, 0x2B, 0x00), QColor(0xE6, 0x9F, 0x00), QColor(0x56, 0x3F, 0x9E),
                QColor(0x00, 0x9E, 0x73)};
    p.text = QColor(0x20, 0x20, 0x20);
    p.mutedText = QColor(0x70, 0x70, 0x70);
    p.grid = QColor(0xD0, 0xD0, 0xD0);
    p.background = QColor(0xFF, 0xFF, 0xFF);
    return p;
}

ThemePalette ThemePalette::dark() {
    ThemePalette p;
    p.theme = Theme::Dark;
    p.requested = QColor(0x3A, 0x9A, 0xE8);
    p.roundingWaste = QColor(0x9F, 0xD8, 0xFA);
    p.inactive = QColor(0xF0, 0xA8, 0x20);
    p.pendingFree = QColor(0xE0, 0x6C, 0xB8);
    p.unmapped = QColor(0x4A, 0x4A, 0x4A);
    p.unmappedHatch = QColor(0x80, 0x80, 0x80);
    p.unreserved = QColor(0x26, 0x26, 0x26);
    p.cursor = QColor(0xF5, 0xF5, 0xF5);
    p.selection = QColor(0xFF, 0x55, 0x33);
    p.highlight = QColor(0x3D, 0xE0, 0x8F);
    p.gapMarker = QColor(0xA8, 0xA8, 0xA8);
    p.blockBorder = QColor(0x1A, 0x1A, 0x1A);
    p.phaseShade = QColor(0xFF, 0xFF, 0xFF, 16);
    p.metric = {QColor(0x3A, 0x9A, 0xE8), QColor(0xD8, 0xD8, 0xD8), QColor(0x2E, 0xC2, 0x96),
                QColor(0xE6, 0x9B, 0xC8)};
    p.fragmentation = QColor(0xF0, 0xA8, 0x20);
    p.marker = {QColor(0xFF, 0x55, 0x33), QColor(0xF0, 0xA8, 0x20), QColor(0xB8, 0xA4, 0xF0),
                QColor(0x2E, 0xC2, 0x96)};
    p.text = QColor(0xE8, 0xE8, 0xE8);
    p.mutedText = QColor(0xA0, 0xA0, 0xA0);
    p.grid = QColor(0x48, 0x48, 0x48);
    p.background = QColor(0x1E, 0x1E, 0x1E);
    return p;
}

bool ThemePalette::isDark(const QPalette& palette) {
    return palette.color(QPalette::Window).lightness() < 128;
}

ThemePalette ThemePalette::forPalette(const QPalette& palette) {
    ThemePalette p = isDark(palette) ? dark() : light();
    p.text = palette.color(QPalette::WindowText);
    p.mutedText = palette.color(QPalette::PlaceholderText);
    p.background = palette.color(QPalette::Base);
    // The grid sits halfway between background and text, nearer the background.
    const QColor bg = p.background;
    const QColor fg = p.text;
    p.grid = QColor((bg.red() * 4 + fg.red()) / 5, (bg.green() * 4 + fg.green()) / 5, (bg.blue() * 4 + fg.blue()) / 5);
    return p;
}

QColor ThemePalette::heatColor(HeatState state) const {
    switch (state) {
        case HeatState::Requested: return requested;
        case HeatState::RoundingWaste: return roundingWaste;
        case HeatState::Inactive: return inactive;
        case HeatState::PendingFree: return pendingFree;
        case HeatState::Unmapped: return unmapped;
    }
    return unreserved;
}

QColor ThemePalette::blockColor(BlockState state) const {
    switch (state) {
        case BlockState::Allocated: return requested;
        case BlockState::PendingFree: return pendingFree;
        case BlockState::Inactive: return inactive;
        case BlockState::Unmapped: return unmapped;
    }
    return unmapped;
}

namespace {
QPalette darkPalette() {
    QPalette p;
    const QColor window(0x2B, 0x2B, 0x2B);
    const QColor base(0x1E, 0x1E, 0x1E);
    const QColor text(0xE8, 0xE8, 0xE8);
    const QColor disabled(0x80, 0x80, 0x80);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, QColor(0x26, 0x26, 0x26));
    p.setColor(QPalette::ToolTipBase, QColor(0x3A, 0x3A, 0x3A));
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, QColor(0xA0, 0xA0, 0xA0));
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, QColor(0x35, 0x35, 0x35));
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, QColor(0xFF, 0x60, 0x60));
    p.setColor(QPalette::Light, QColor(0x50, 0x50, 0x50));
    p.setColor(QPalette::Midlight, QColor(0x42, 0x42, 0x42));
    p.setColor(QPalette::Mid, QColor(0x30, 0x30, 0x30));
    p.setColor(QPalette::Dark, QColor(0x18, 0x18, 0x18));
    p.setColor(QPalette::Shadow, QColor(0x00, 0x00, 0x00));
    p.setColor(QPalette::Highlight, QColor(0x2F, 0x6F, 0xB0));
    p.setColor(QPalette::HighlightedText, QColor(0xFF, 0xFF, 0xFF));
    p.setColor(QPalette::Link, QColor(0x6C, 0xB4, 0xF0));
    p.setColor(QPalette::Disabled, QPalette::WindowText, disabled);
    p.setColor(QPalette::Disabled, QPalette::Text, disabled);
    p.setColor(QPalette::Disabled, QPalette::ButtonText, disabled);
    return p;
}

struct StartupLook {
    bool captured = false;
    QString styleName;
    QPalette palette;
};
StartupLook& startupLook() {
    static StartupLook look;
    return look;
}
}  // namespace

void applyTheme(QApplication& app, ThemeChoice choice) {
    StartupLook& look = startupLook();
    if (!look.captured) {
        look.captured = true;
        look.styleName = app.style() ? app.style()->name() : QString();
        look.palette = app.palette();
    }
    switch (choice) {
        case ThemeChoice::System:
            if (!look.styleName.isEmpty()) app.setStyle(QStyleFactory::create(look.styleName));
            app.setPalette(look.palette);
            break;
        case ThemeChoice::Light:
            app.setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
            app.setPalette(app.style()->standardPalette());
            break;
        case ThemeChoice::Dark:
            app.setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
            app.setPalette(darkPalette());
            break;
    }
}

}  // namespace allocscope::views
