#include "views/widgets/ExportHelpers.h"

#include <QFile>
#include <QPainter>
#include <QPixmap>
#include <QSvgGenerator>
#include <QWidget>

namespace allocscope::views {

namespace {
bool fail(QString* error, const QString& message) {
    if (error) *error = message;
    return false;
}
}  // namespace

bool ExportHelpers::exportPng(QWidget* widget, const QString& path, QString* error) {
    if (!widget) return fail(error, QStringLiteral("Nothing to export"));
    const QPixmap pixmap = widget->grab();
    if (pixmap.isNull()) return fail(error, QStringLiteral("Could not render the view for %1").arg(path));
    if (!pixmap.save(path, "PNG")) return fail(error, QStringLiteral("Could not write %1").arg(path));
    return true;
}

bool ExportHelpers::exportSvg(QWidget* widget, const QString& path, const QString& title, QString* error) {
    if (!widget) return fail(error, QStringLiteral("Nothing to export"));
    {
        // QSvgGenerator reports nothing when it cannot open the file; check first.
        QFile probe(path);
        if (!probe.open(QIODevice::WriteOnly)) return fail(error, QStringLiteral("Could not write %1: %2").arg(path, probe.errorString()));
    }
    QSvgGenerator generator;
    generator.setFileName(path);
    generator.setSize(widget->size());
    generator.setViewBox(QRect(QPoint(0, 0), widget->size()));
    generator.setTitle(title.isEmpty() ? widget->windowTitle() : title);
    generator.setDescription(QStringLiteral("Exported by AllocScope"));
    QPainter painter;
    if (!painter.begin(&generator)) return fail(error, QStringLiteral("Could not write %1").arg(path));
    widget->render(&painter, QPoint(), QRegion(), QWidget::DrawWindowBackground | QWidget::DrawChildren);
    painter.end();
    return true;
}

}  // namespace allocscope::views
