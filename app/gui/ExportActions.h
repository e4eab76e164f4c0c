#pragma once
// File ▸ Export: the view in front as PNG or SVG, the selected run's timeline and the run table as
// CSV, and a run as a PyTorch memory snapshot pickle. None of this lays out the window: it reads
// what the window shows and reports back (errors, status line, background jobs), so the window
// hands it exactly that in a Window struct and keeps only thin members that delegate here.
#include <QCoreApplication>
#include <QString>

#include <functional>

#include "views/data/TimelineData.h"

class QMenu;
class QTabWidget;
class QWidget;

namespace allocscope::app {

class BackgroundJob;
class ComparePage;

class ExportActions {
    Q_DECLARE_TR_FUNCTIONS(ExportActions)
public:
    // What the exports need from the window. The pointers outlive this object (the window owns
    // both); the functions are asked at the moment of each export, so they see the current state.
    struct Window {
        QWidget* widget = nullptr;        // the dialogs' parent and the background jobs' owner
        QTabWidget* tabs = nullptr;       // which view is in front
        ComparePage* compare = nullptr;   // its charts export themselves
        std::function<QString()> sessionPath;  // empty when no session is open
        std::function<const views::TimelineData&()> timeline;  // the selected run's
        std::function<QString()> runTableCsv;
        std::function<int()> selectedRun;      // <= 0: none
        std::function<qint64()> eventCount;    // of the selected run
        std::function<void(const QString& title, const QString& message)> error;  // tells the user
        std::function<void(const QString& message)> status;                       // status line
        std::function<void(BackgroundJob* job, const QString& doneMessage)> startJob;
    };

    explicit ExportActions(Window window);

    // Adds the Export sub-menu to `file` and returns it (the window enables it with a session).
    QMenu* addMenu(QMenu* file);
    // Asks where to write, then exports. what: "png", "svg", "timeline", "runs" or "pickle".
    void showDialog(const QString& what);

    // The exports without the dialog. Each tells the user what went wrong (and where) itself.
    bool exportCurrentView(const QString& path);  // .png or .svg by extension
    bool exportTimelineCsv(const QString& path);
    bool exportRunTableCsv(const QString& path);
    void exportSnapshotPickle(const QString& path);  // background job

private:
    bool writeCsv(const QString& path, const QString& text);

    Window window_;
};

}  // namespace allocscope::app
