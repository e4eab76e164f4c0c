#pragma once
// File ▸ Export: any view as a PNG (what is on screen, at the screen's pixel ratio) or as an SVG
// (the widget re-rendered through QSvgGenerator, so text and lines stay vector).
#include <QString>

class QWidget;

namespace allocscope::views {

struct ExportHelpers {
    // Both return false and set *error (if given) to a sentence naming the file on failure.
    static bool exportPng(QWidget* widget, const QString& path, QString* error = nullptr);
    static bool exportSvg(QWidget* widget, const QString& path, const QString& title = QString(),
                          QString* error = nullptr);
};

}  // namespace allocscope::views
