#include "app/gui/ExportActions.h"

#include <QAction>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QTabWidget>

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "app/gui/BackgroundJob.h"
#include "app/gui/ComparePage.h"
#include "storage/formats/FormatError.h"
#include "storage/formats/PickleWriter.h"
#include "storage/session/SessionExport.h"
#include "storage/session/SessionReader.h"
#include "views/data/TimelineCsv.h"
#include "views/widgets/ExportHelpers.h"

namespace allocscope::app {
namespace {
bool writeText(const QString& path, const QString& text, QString* why) {
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
        *why = QObject::tr("cannot write %1: %2").arg(path, file.errorString());
        return false;
    }
    const QByteArray bytes = text.toUtf8();
    if (file.write(bytes) != bytes.size()) {
        *why = QObject::tr("could not write all of %1: %2").arg(path, file.errorString());
        return false;
    }
    return true;
}
}  // namespace

ExportActions::ExportActions(Window window) : window_(std::move(window)) {}

QMenu* ExportActions::addMenu(QMenu* file) {
    QMenu* menu = file->addMenu(tr("&Export"));
    menu->setToolTipsVisible(true);
    // The menu is the actions' context: it is the window's, and this object lives as long.
    menu->addAction(tr("Current View as &PNG…"), menu, [this] { showDialog(QStringLiteral("png")); })
        ->setToolTip(tr("The view in front (segment map, heatmap, timeline or comparison) as an image"));
    menu->addAction(tr("Current View as &SVG…"), menu, [this] { showDialog(QStringLiteral("svg")); })
        ->setToolTip(tr("The view in front as a vector drawing"));
    menu->addAction(tr("&Timeline as CSV…"), menu, [this] { showDialog(QStringLiteral("timeline")); })
        ->setToolTip(tr("The selected run's timeline buckets (min and max of each series)"));
    menu->addAction(tr("&Run Table as CSV…"), menu, [this] { showDialog(QStringLiteral("runs")); })
        ->setToolTip(tr("The run list with peak reserved and OOMs"));
    menu->addAction(tr("Run as Snapshot &Pickle…"), menu, [this] { showDialog(QStringLiteral("pickle")); })
        ->setToolTip(tr("The selected run as a PyTorch memory snapshot (state at its last event + its trace)"));
    return menu;
}

void ExportActions::showDialog(const QString& what) {
    const QString session = window_.sessionPath();
    if (session.isEmpty()) return;
    const QString base = QFileInfo(session).completeBaseName();
    QString filter;
    QString name;
    if (what == QLatin1String("png")) { filter = tr("PNG images (*.png)"); name = base + QStringLiteral(".png"); }
    if (what == QLatin1String("svg")) { filter = tr("SVG drawings (*.svg)"); name = base + QStringLiteral(".svg"); }
    if (what == QLatin1String("timeline")) { filter = tr("CSV (*.csv)"); name = base + QStringLiteral("-timeline.csv"); }
    if (what == QLatin1String("runs")) { filter = tr("CSV (*.csv)"); name = base + QStringLiteral("-runs.csv"); }
    if (what == QLatin1String("pickle")) { filter = tr("PyTorch snapshots (*.pickle)"); name = base + QStringLiteral(".pickle"); }
    const QString path = QFileDialog::getSaveFileName(window_.widget, tr("Export"), name, filter);
    if (path.isEmpty()) return;
    if (what == QLatin1String("png") || what == QLatin1String("svg")) exportCurrentView(path);
    if (what == QLatin1String("timeline")) exportTimelineCsv(path);
    if (what == QLatin1String("runs")) exportRunTableCsv(path);
    if (what == QLatin1String("pickle")) exportSnapshotPickle(path);
}

bool ExportActions::exportCurrentView(const QString& path) {
    QString why;
    const bool svg = path.endsWith(QLatin1String(".svg"), Qt::CaseInsensitive);
    bool ok = false;
    QTabWidget* tabs = window_.tabs;
    if (tabs->currentWidget() == window_.compare) {
        // The comparison's charts, not a screenshot of the page with its table and buttons.
        ok = svg ? window_.compare->exportChartsSvg(path, &why) : window_.compare->exportChartsPng(path, &why);
    } else {
        QWidget* view = tabs->currentWidget();
        ok = svg ? views::ExportHelpers::exportSvg(view, path, tabs->tabText(tabs->currentIndex()).remove(QLatin1Char('&')), &why)
                 : views::ExportHelpers::exportPng(view, path, &why);
    }
    if (!ok) {
        window_.error(tr("Export failed"), why);
        return false;
    }
    window_.status(tr("Exported %1").arg(path));
    return true;
}

bool ExportActions::exportTimelineCsv(const QString& path) { return writeCsv(path, views::timelineCsv(window_.timeline())); }

bool ExportActions::exportRunTableCsv(const QString& path) { return writeCsv(path, window_.runTableCsv()); }

bool ExportActions::writeCsv(const QString& path, const QString& text) {
    QString why;
    if (!writeText(path, text, &why)) {
        window_.error(tr("Export failed"), why);
        return false;
    }
    window_.status(tr("Exported %1").arg(path));
    return true;
}

void ExportActions::exportSnapshotPickle(const QString& path) {
    const int run = window_.selectedRun();
    const QString session = window_.sessionPath();
    if (session.isEmpty() || run <= 0) {
        window_.error(tr("Export failed"), tr("Select a run to export first."));
        return;
    }
    if (QFileInfo(path) == QFileInfo(session)) {
        window_.error(tr("Export failed"), tr("The export would overwrite the session file %1.").arg(path));
        return;
    }
    const qint64 last = window_.eventCount() - 1;
    // The job runs on its own thread, so it reads the session through its own reader.
    auto* job = new BackgroundJob(tr("Exporting run %1").arg(run), [session, path, run, last](BackgroundJob&) {
        storage::SessionReader reader(session.toStdString(), false);
        try {
            formats::PickleWriter::writeFile(storage::SessionExport::snapshot(reader, run, 0, static_cast<std::uint64_t>(std::max<qint64>(last, 0))),
                                             path.toStdString());
        } catch (const formats::FormatError& e) {
            throw std::runtime_error(QStringLiteral("%1 (%2)").arg(QString::fromStdString(e.problem()), path).toStdString());
        }
    }, window_.widget);
    window_.startJob(job, tr("Exported run %1 to %2").arg(run).arg(path));
}

}  // namespace allocscope::app
