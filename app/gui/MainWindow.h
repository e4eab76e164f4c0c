#pragma once
// The application's main window. Left dock: the session's runs and what to run next
// (ExperimentPanel). Centre: Segments / Heatmap / Timeline / Compare tabs for the selected run at
// the scrubber's event, with the event scrubber under them, and Ranks (the session's runs as a
// distributed job's ranks, RanksController). Right docks: the block inspector and
// memory_summary() at the current event. Menus: File (new, open, open folder, recent, save as, export, quit),
// View (tabs, docks, theme), Help. All session reading and recording happens in background jobs
// (RunStateService, BackgroundJob); the window only shows their results.
#include <QList>
#include <QMainWindow>
#include <QStringList>

#include <memory>
#include <vector>

#include "app/gui/LessonNavigator.h"
#include "app/gui/RunStateService.h"
#include "views/data/RunListData.h"
#include "views/data/TimelineData.h"

class QAction;
class QMenu;
class QTabWidget;
class QTimer;

namespace allocscope::views {
class AllocationsWidget;
class BlockInspectorWidget;
class EventScrubber;
class HeatmapWidget;
class MemorySummaryView;
class RanksWidget;
class RunListWidget;
class RunVerdictBanner;
class SegmentMapWidget;
class TimelineChartView;
class WelcomeHint;
enum class ThemeChoice;
}  // namespace allocscope::views

namespace allocscope::app {

class AllocationsController;
class SearchController;
class BackgroundJob;
class ComparePage;
class ExperimentPanel;
class ExportActions;
class JobTracker;
class LessonDock;
class LiveRunFollower;
class OomAnswerController;
class RanksController;
class RecentFiles;
class SessionDocument;
class SessionWatcher;
class StacksPage;
class ThemeMenu;

class MainWindow : public QMainWindow, public LessonNavigator {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // Opens a session, or imports a PyTorch snapshot / RMM CSV into a temporary session. Returns
    // false (after telling the user what and where) when it cannot. Imports finish in the
    // background (isBusy()).
    bool openFile(const QString& path);
    // Several files (command line, drag and drop): sessions open, traces are imported together
    // into one temporary session.
    void openFiles(const QStringList& paths);
    QStringList recentFiles() const;  // File ▸ Open Recent, newest first (RecentFiles)
    QString currentFile() const;
    bool isBusy() const;  // a recording, import or export job is running
    bool isSessionTemporary() const;

    // File ▸ New session, Save As, Export: the dialogs' work without the dialogs (tests, lessons).
    // The exports are ExportActions'; these delegate.
    bool newSession();
    bool saveSessionAs(const QString& path);
    bool exportCurrentView(const QString& path);  // .png or .svg by extension
    bool exportTimelineCsv(const QString& path);
    bool exportRunTableCsv(const QString& path);
    void exportSnapshotPickle(const QString& path);  // background job
    // Run / Compare with what the left panel says.
    void runExperiment();
    void compareExperiment();
    void setTheme(views::ThemeChoice choice);
    void cancelJobs();

    // LessonNavigator
    bool openSessionFile(const QString& path) override;
    void selectRun(int number) override;
    void goToEvent(qint64 seq) override;
    void showView(const QString& name) override;
    void selectBlock(quint64 address) override;
    void showComparison(const QList<int>& runs) override;

    // The parts, for tests and the lessons' wiring.
    views::RunListWidget* runList() const { return runList_; }
    ExperimentPanel* experimentPanel() const { return panel_; }
    views::SegmentMapWidget* segmentMap() const { return segmentMap_; }
    views::HeatmapWidget* heatmap() const { return heatmap_; }
    views::TimelineChartView* timeline() const { return timeline_; }
    views::MemorySummaryView* summaryView() const { return summary_; }
    views::BlockInspectorWidget* inspector() const { return inspector_; }
    views::EventScrubber* scrubber() const { return scrubber_; }
    QTabWidget* viewTabs() const { return tabs_; }
    views::AllocationsWidget* allocations() const { return allocations_; }
    SearchController* search() const { return search_; }
    ComparePage* comparePage() const { return compare_; }
    StacksPage* stacksPage() const { return stacks_; }
    views::RanksWidget* ranksView() const { return ranks_; }
    RanksController* ranksController() const { return ranksController_; }
    OomAnswerController* oomAnswer() const { return oom_; }
    QAction* lessonsAction() const { return lessonsAction_; }
    LessonDock* lessonDock() const { return lessonDock_; }
    RunStateService* stateService() const { return service_; }
    // The last state shown (event, approximate or not) and the current run.
    const RunStateFrame& currentFrame() const { return frame_; }
    int currentRun() const { return service_->run(); }
    // Refreshes the run list from the session (after recordings, imports).
    void refreshRuns(int selectAfter = -1);
    // File ▸ Reload (F5), and SessionWatcher's automatic refresh when another process writes:
    // the run list again (the selection kept) and, with reopenShownRun, the shown run through a
    // fresh reader at the same event (automatic: only when its reader took no locks).
    void reload(bool reopenShownRun = true);
    SessionWatcher* sessionWatcher() const { return watcher_; }
    LiveRunFollower* liveFollower() const { return live_; }  // the shown run follows another process's recording

signals:
    void runsChanged();       // the run list was reloaded
    void stateShown();        // a state (segment map, summary) is on screen
    void jobFinished(bool ok);

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void buildCentre();
    void buildDocks();
    void createMenus();
    void showOpenDialog();
    void showSaveAsDialog();
    void showAbout();
    void updateTitle();
    void updateActions();
    bool replaceDocument(std::unique_ptr<SessionDocument> doc);
    bool ensureWritableDocument();
    void importTraces(const QStringList& paths);
    void startJob(BackgroundJob* job, const QString& doneMessage);
    void error(const QString& title, const QString& message);

    void onRunSelected(int number);
    void onOverview(const RunOverview& overview);
    void onState(const RunStateFrame& frame);
    void onScrub(qint64 event, bool dragging);
    void onBlockSelected(quint64 address);
    void wireAllocations();

    std::unique_ptr<SessionDocument> doc_;
    RunStateService* service_ = nullptr;
    SessionWatcher* watcher_ = nullptr;
    LiveRunFollower* live_ = nullptr;
    JobTracker* jobs_ = nullptr;  // the background jobs and the status bar's progress and Cancel

    views::RunListWidget* runList_ = nullptr;
    ExperimentPanel* panel_ = nullptr;
    QTabWidget* tabs_ = nullptr;
    views::SegmentMapWidget* segmentMap_ = nullptr;
    views::RunVerdictBanner* verdictBanner_ = nullptr;  // over the tabs: a diverged / uncompared run
    views::HeatmapWidget* heatmap_ = nullptr;
    views::TimelineChartView* timeline_ = nullptr;
    ComparePage* compare_ = nullptr;
    views::AllocationsWidget* allocations_ = nullptr;
    AllocationsController* allocationsLoader_ = nullptr;
    SearchController* search_ = nullptr;
    StacksPage* stacks_ = nullptr;
    views::RanksWidget* ranks_ = nullptr;  // a tab: like Compare it is about the session, not the scrubbed event
    RanksController* ranksController_ = nullptr;
    OomAnswerController* oom_ = nullptr;  // the OOM tab
    views::EventScrubber* scrubber_ = nullptr;
    views::BlockInspectorWidget* inspector_ = nullptr;
    views::MemorySummaryView* summary_ = nullptr;
    views::WelcomeHint* emptyHint_ = nullptr;
    QTimer* settleTimer_ = nullptr;

    std::unique_ptr<RecentFiles> recent_;
    std::unique_ptr<ExportActions> exports_;
    QAction* saveAsAction_ = nullptr;
    QMenu* exportMenu_ = nullptr;
    QAction* lessonsAction_ = nullptr;
    LessonDock* lessonDock_ = nullptr;
    ThemeMenu* themeMenu_ = nullptr;

    views::TimelineData timelineData_;
    RunStateFrame frame_;
    int pendingRun_ = -1;
    qint64 pendingEvent_ = -1;
    quint64 selectedBlock_ = 0;
    bool hasSelectedBlock_ = false;
};

}  // namespace allocscope::app
