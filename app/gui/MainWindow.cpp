#include "app/gui/MainWindow.h"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QCloseEvent>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QScrollArea>
#include <QScreen>
#include <QScrollBar>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <utility>

#include "allocator/config/ConfigParser.h"
#include "app/gui/AllocationsController.h"
#include "app/gui/BackgroundJob.h"
#include "app/gui/SearchController.h"
#include "app/gui/MultiImport.h"
#include "app/gui/OomAnswerController.h"
#include "app/gui/RanksController.h"
#include "app/gui/ComparePage.h"
#include "app/gui/ExperimentPanel.h"
#include "app/gui/ExportActions.h"
#include "app/gui/JobTracker.h"
#include "app/gui/LessonDock.h"
#include "app/gui/LiveRunFollower.h"
#include "app/gui/ReadOnlySessionPrompt.h"
#include "app/gui/RecentFiles.h"
#include "app/gui/SessionDocument.h"
#include "app/gui/SessionMigration.h"
#include "app/gui/SessionWatcher.h"
#include "app/gui/StacksPage.h"
#include "app/gui/ThemeMenu.h"
#include "app/gui/ViewDataAdapters.h"
#include "app/gui/RecordingSource.h"
#include "app/gui/WhatIfReplay.h"
#include "app/gui/WorkloadRun.h"
#include "storage/session/SessionError.h"
#include "storage/session/SessionReader.h"
#include "storage/session/SessionSchema.h"
#include "views/theme/ThemePalette.h"
#include "views/util/Formatting.h"
#include "views/widgets/AllocationsWidget.h"
#include "views/widgets/BlockInspectorWidget.h"
#include "views/widgets/EventScrubber.h"
#include "views/widgets/HeatmapWidget.h"
#include "views/widgets/MemorySummaryView.h"
#include "views/widgets/RanksWidget.h"
#include "views/widgets/RunListModel.h"
#include "views/widgets/RunListWidget.h"
#include "views/widgets/RunVerdictBanner.h"
#include "views/widgets/SegmentMapCanvas.h"
#include "views/widgets/SegmentMapWidget.h"
#include "views/widgets/WelcomeHint.h"
#include "views/widgets/SummaryTableModel.h"
#include "views/charts/TimelineChartView.h"
#include "views/data/TimelinePeak.h"

namespace allocscope::app {
namespace {
const char* const kGeometryKey = "mainWindow/geometry";
const char* const kStateKey = "mainWindow/state";
const char* const kRawAddressesKey = "view/heatmapRawAddresses";
// After the scrubber is released the exact state is asked for once this much later, so a
// release right after a last drag step does not load two states.
constexpr int kSettleMs = 40;

QString where(const storage::SessionError& e) {
    return e.where().empty() ? QString() : QStringLiteral(" (%1)").arg(QString::fromStdString(e.where()));
}

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent), service_(new RunStateService(this)) {
    setWindowTitle(QStringLiteral("AllocScope"));
    setWindowIcon(QIcon(QStringLiteral(":/allocscope/icons/allocscope.svg")));
    setAcceptDrops(true);
    setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowTabbedDocks);
    buildCentre();
    buildDocks();
    createMenus();

    // The status bar's Cancel stops everything cancelJobs() does (its jobs a second time: a flag).
    jobs_ = new JobTracker(statusBar(), [this] { cancelJobs(); }, this);
    statusBar()->showMessage(tr("Ready"));

    settleTimer_ = new QTimer(this);
    settleTimer_->setSingleShot(true);
    settleTimer_->setInterval(kSettleMs);
    connect(settleTimer_, &QTimer::timeout, this, [this] { service_->requestState(scrubber_->currentEvent(), false); });

    ranksController_ = new RanksController(ranks_, {[this] { return currentFile(); }, [this](const QList<int>& runs) { showComparison(runs); },
                                                    [this](const QString& message) { statusBar()->showMessage(message); }}, this);
    connect(this, &MainWindow::runsChanged, ranksController_, &RanksController::refresh);
    connect(service_, &RunStateService::overviewReady, this, &MainWindow::onOverview);
    connect(service_, &RunStateService::stateReady, this, &MainWindow::onState);
    connect(service_, &RunStateService::markersReady, this, [this](int run, const std::vector<views::TimelineMarker>& markers) {
        if (run != service_->run()) return;
        timelineData_.markers = markers;
        timeline_->setData(timelineData_);
        timeline_->setCurrentEvent(scrubber_->currentEvent());
    });
    connect(service_, &RunStateService::blockReady, this, [this](const views::BlockInspectorData& block) {
        if (hasSelectedBlock_ && block.address == selectedBlock_) inspector_->setData(block);
    });
    connect(service_, &RunStateService::opStepResolved, scrubber_, &views::EventScrubber::setCurrentEvent);
    // A run another process still records: its views follow it (after onOverview's connection).
    live_ = new LiveRunFollower({watcher_, service_, allocationsLoader_, allocations_, scrubber_, runList_->model(), statusBar(), [this] { return currentFile(); },
                                 [this](qint64 event) { goToEvent(event); }}, this);
    connect(this, &MainWindow::runsChanged, live_, &LiveRunFollower::syncShownRun);
    connect(service_, &RunStateService::failed, this, [this](const QString& message) {
        statusBar()->showMessage(tr("Could not read the session: %1").arg(message));
    });

    QSettings settings;
    if (!restoreGeometry(settings.value(kGeometryKey).toByteArray())) {
        // First start: 1280 x 720, or the whole screen where it is smaller.
        QSize size(1280, 720);
        if (QScreen* s = screen()) size = size.boundedTo(s->availableGeometry().size());
        resize(size);
    }
    restoreState(settings.value(kStateKey).toByteArray());
    if (const views::ThemeChoice choice = ThemeMenu::saved(); choice != views::ThemeChoice::System) setTheme(choice);
    updateActions();
}

MainWindow::~MainWindow() {
    delete lessonDock_;  // its controller may still run a lesson that records and navigates
    lessonDock_ = nullptr;
    jobs_->stopAll();
    delete compare_;  // before the document whose writer it may use
    compare_ = nullptr;
    delete ranksController_;  // its reading job too, before the document
    delete oom_;
    service_->close();
}

// ---- layout ----

void MainWindow::buildCentre() {
    auto* centre = new QWidget(this);
    auto* layout = new QVBoxLayout(centre);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    tabs_ = new QTabWidget(centre);
    tabs_->setDocumentMode(true);
    // Eight tabs (the OOM tab for a run with one) do not fit the centre of a 1280 px window:
    // names shorten ("Allocat…") rather than scroll the first tabs out of sight.
    tabs_->setElideMode(Qt::ElideRight);
    tabs_->setUsesScrollButtons(false);
    segmentMap_ = new views::SegmentMapWidget(tabs_);
    heatmap_ = new views::HeatmapWidget(tabs_);
    timeline_ = new views::TimelineChartView(tabs_);
    compare_ = new ComparePage(tabs_);
    ranks_ = new views::RanksWidget(tabs_);
    tabs_->addTab(segmentMap_, tr("&Segments"));
    tabs_->addTab(heatmap_, tr("&Heatmap"));
    tabs_->addTab(timeline_, tr("&Timeline"));
    tabs_->addTab(compare_, tr("C&ompare"));
    stacks_ = StacksPage::install(tabs_, this);
    tabs_->addTab(ranks_, tr("Ra&nks"));
    oom_ = OomAnswerController::install(tabs_, this, this);  // shown, and in front, for a run with an OOM
    tabs_->setTabToolTip(0, tr("Every reserved segment a row, blocks coloured by state, at the current event (Ctrl+1)"));
    tabs_->setTabToolTip(1, tr("Time × address: where memory was allocated, cached or unreserved over the run (Ctrl+2)"));
    tabs_->setTabToolTip(2, tr("Allocated, reserved, active and requested memory over the run (Ctrl+3)"));
    tabs_->setTabToolTip(3, tr("Runs of one program under several configs, side by side (Ctrl+4)"));
    tabs_->setTabToolTip(tabs_->indexOf(ranks_), tr("A distributed job's ranks: peaks, fragmentation, retries, OOMs, outliers (Ctrl+7)"));
    emptyHint_ = new views::WelcomeHint(centre);
    connect(emptyHint_, &views::WelcomeHint::lessonsRequested, this, [this] { lessonsAction_->trigger(); });
    layout->addWidget(emptyHint_, 1);
    layout->addWidget(verdictBanner_ = new views::RunVerdictBanner(centre));
    layout->addWidget(tabs_, 1);
    scrubber_ = new views::EventScrubber(centre);
    layout->addWidget(scrubber_);
    setCentralWidget(centre);
    tabs_->hide();

    wireAllocations();
    connect(scrubber_, &views::EventScrubber::eventChanged, this, &MainWindow::onScrub);
    connect(scrubber_, &views::EventScrubber::dragFinished, this, [this] { settleTimer_->start(); });
    connect(scrubber_, &views::EventScrubber::opStepRequested, this,
            [this](int direction) { service_->requestOpStep(scrubber_->currentEvent(), direction); });
    connect(heatmap_, &views::HeatmapWidget::eventRequested, scrubber_, &views::EventScrubber::setCurrentEvent);
    connect(timeline_, &views::TimelineChartView::eventRequested, scrubber_, &views::EventScrubber::setCurrentEvent);
    connect(segmentMap_, &views::SegmentMapWidget::blockSelected, this, &MainWindow::onBlockSelected);
    connect(segmentMap_, &views::SegmentMapWidget::selectionCleared, this, [this] {
        hasSelectedBlock_ = false;
        inspector_->clear();
    });
    connect(compare_, &ComparePage::runsRecorded, this, [this](const QList<int>&) { refreshRuns(); });
    connect(compare_, &ComparePage::statusMessage, this, [this](const QString& text) { statusBar()->showMessage(text); });
    connect(compare_, &ComparePage::busyChanged, this, [this](bool busy) {
        panel_->setBusy(busy || !jobs_->isEmpty());
        if (!busy && doc_) doc_->flush();
    });
}

void MainWindow::buildDocks() {
    auto* left = new QDockWidget(tr("Runs"), this);
    left->setObjectName(QStringLiteral("runsDock"));
    auto* split = new QSplitter(Qt::Vertical, left);
    runList_ = new views::RunListWidget(split);
    panel_ = new ExperimentPanel;
    auto* scroll = new QScrollArea(split);
    scroll->setWidget(panel_);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    split->addWidget(runList_);
    split->addWidget(scroll);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 3);
    left->setWidget(split);
    left->setMinimumWidth(330);
    addDockWidget(Qt::LeftDockWidgetArea, left);

    auto* inspectorDock = new QDockWidget(tr("Inspector"), this);
    inspectorDock->setObjectName(QStringLiteral("inspectorDock"));
    inspector_ = new views::BlockInspectorWidget(inspectorDock);
    inspectorDock->setWidget(inspector_);
    addDockWidget(Qt::RightDockWidgetArea, inspectorDock);

    auto* summaryDock = new QDockWidget(tr("Memory summary"), this);
    summaryDock->setObjectName(QStringLiteral("summaryDock"));
    summary_ = new views::MemorySummaryView(summaryDock);
    summaryDock->setWidget(summary_);
    // Compact by default: current and peak; the cumulative totals are in memory_summary()'s text.
    summary_->table()->setColumnHidden(views::SummaryTableModel::AllocatedColumn, true);
    summary_->table()->setColumnHidden(views::SummaryTableModel::FreedColumn, true);
    addDockWidget(Qt::RightDockWidgetArea, summaryDock);
    resizeDocks({left, inspectorDock}, {360, 330}, Qt::Horizontal);

    connect(runList_, &views::RunListWidget::runSelected, this, &MainWindow::onRunSelected);
    connect(panel_, &ExperimentPanel::runRequested, this, &MainWindow::runExperiment);
    connect(panel_, &ExperimentPanel::compareRequested, this, &MainWindow::compareExperiment);
    connect(inspector_, &views::BlockInspectorWidget::eventRequested, scrubber_, &views::EventScrubber::setCurrentEvent);
}

void MainWindow::createMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* newAction = file->addAction(tr("&New Session"), this, [this] { newSession(); });
    newAction->setShortcut(QKeySequence::New);
    newAction->setToolTip(tr("Start an empty temporary session (Save As keeps it)"));
    QAction* open = file->addAction(tr("&Open…"), this, &MainWindow::showOpenDialog);
    open->setShortcut(QKeySequence::Open);
    open->setToolTip(tr("Open a session file, or import PyTorch memory snapshots / RMM CSV logs (select several: one session)"));
    QAction* openFolder = file->addAction(tr("Open &Folder…"), this, [this] {
        const QString folder = QFileDialog::getExistingDirectory(this, tr("Open Folder of Snapshots"));
        if (!folder.isEmpty()) openFiles({folder});
    });
    openFolder->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    openFolder->setToolTip(tr("Import every snapshot and CSV log of a folder (a distributed job's ranks) into one session"));
    recent_ = std::make_unique<RecentFiles>(file->addMenu(tr("Open &Recent")), [this](const QString& path) { openFile(path); });
    QAction* reloadAction = file->addAction(tr("Re&load"), this, [this] { reload(true); });
    reloadAction->setShortcut(QKeySequence(Qt::Key_F5));
    reloadAction->setToolTip(tr("Read the session again: runs added by other processes, the shown run's new events"));
    watcher_ = new SessionWatcher(this);  // the same, automatically, when another process writes
    connect(watcher_, &SessionWatcher::changed, this, [this] { if (!isBusy()) reload(service_->readsWithoutLocks()); });
    saveAsAction_ = file->addAction(tr("Save &As…"), this, &MainWindow::showSaveAsDialog);
    saveAsAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));
    saveAsAction_->setToolTip(tr("Save a copy of the session and continue in it"));
    // The exports read what the window shows at the moment they run, and report through it.
    ExportActions::Window shown;
    shown.widget = this;
    shown.tabs = tabs_;
    shown.compare = compare_;
    shown.sessionPath = [this] { return currentFile(); };
    shown.timeline = [this]() -> const views::TimelineData& { return timelineData_; };
    shown.runTableCsv = [this] { return runList_->model()->toCsv(); };
    shown.selectedRun = [this] { return service_->run(); };
    shown.eventCount = [this] { return scrubber_->eventCount(); };
    shown.error = [this](const QString& title, const QString& message) { error(title, message); };
    shown.status = [this](const QString& message) { statusBar()->showMessage(message); };
    shown.startJob = [this](BackgroundJob* job, const QString& doneMessage) { startJob(job, doneMessage); };
    exports_ = std::make_unique<ExportActions>(std::move(shown));
    exportMenu_ = exports_->addMenu(file);
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    const QStringList names{tr("&Segments"), tr("&Heatmap"), tr("&Timeline"), tr("&Compare"), tr("&Allocations")};
    for (int i = 0; i < names.size(); ++i) {
        QAction* a = view->addAction(names[i], this, [this, i] {
            tabs_->setCurrentIndex(i);
            tabs_->currentWidget()->setFocus();
        });
        a->setShortcut(QKeySequence(Qt::CTRL | static_cast<Qt::Key>(Qt::Key_1 + i)));
    }
    view->addAction(tr("Stac&ks"), QKeySequence(Qt::CTRL | Qt::Key_6), this, [this] { stacks_->bringToFront(false); });
    view->addAction(tr("Ra&nks"), QKeySequence(Qt::CTRL | Qt::Key_7), this, [this] { tabs_->setCurrentWidget(ranks_); });
    QAction* focusScrubber = view->addAction(tr("Event &Scrubber"), this, [this] { scrubber_->slider()->setFocus(); });
    focusScrubber->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    // The heatmap's own checkbox and this action are one setting, remembered across sessions.
    QAction* rawAddresses = view->addAction(tr("Heatmap on &Raw Addresses"));
    rawAddresses->setCheckable(true);
    rawAddresses->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R));
    rawAddresses->setToolTip(heatmap_->rawToggle()->toolTip());
    connect(rawAddresses, &QAction::toggled, heatmap_, &views::HeatmapWidget::setRawAddresses);
    connect(heatmap_, &views::HeatmapWidget::rawAddressesChanged, this, [rawAddresses](bool raw) {
        rawAddresses->setChecked(raw);
        QSettings().setValue(kRawAddressesKey, raw);
    });
    rawAddresses->setChecked(QSettings().value(kRawAddressesKey, false).toBool());
    view->addSeparator();
    for (QDockWidget* dock : findChildren<QDockWidget*>()) view->addAction(dock->toggleViewAction());
    view->addSeparator();
    themeMenu_ = new ThemeMenu(view, this);

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    lessonsAction_ = help->addAction(tr("&Lessons…"));
    lessonsAction_->setToolTip(tr("Guided lessons: why memory fragments, and what each setting changes"));
    lessonsAction_->setShortcut(QKeySequence(Qt::Key_F1));
    help->addAction(tr("&About AllocScope"), this, &MainWindow::showAbout);

    lessonDock_ = new LessonDock(this, this);
    addDockWidget(Qt::RightDockWidgetArea, lessonDock_);
    lessonDock_->hide();
    connect(lessonsAction_, &QAction::triggered, lessonDock_, &LessonDock::showLessons);
    if (!lessonDock_->loadError().isEmpty()) lessonsAction_->setToolTip(lessonDock_->loadError());
}

// ---- files ----

QStringList MainWindow::recentFiles() const { return recent_->files(); }
QString MainWindow::currentFile() const { return doc_ ? doc_->path() : QString(); }
bool MainWindow::isBusy() const { return !jobs_->isEmpty() || compare_->isBusy(); }
bool MainWindow::isSessionTemporary() const { return doc_ && doc_->isTemporary(); }

void MainWindow::showOpenDialog() {
    const QStringList paths = QFileDialog::getOpenFileNames(
        this, tr("Open"), QString(),
        tr("All supported (*.allocscope *.pickle *.pkl *.json *.csv);;Sessions (*.allocscope);;"
           "PyTorch snapshots (*.pickle *.pkl *.json);;RMM CSV logs (*.csv);;All files (*)"));
    if (!paths.isEmpty()) openFiles(paths);
}

void MainWindow::error(const QString& title, const QString& message) {
    statusBar()->showMessage(message);
    QMessageBox::warning(this, title, message);
}

bool MainWindow::openFile(const QString& path) {
    openFiles({path});
    return doc_ && (QFileInfo(doc_->path()) == QFileInfo(path) || isBusy());
}

void MainWindow::openFiles(const QStringList& paths) {
    QStringList traces;
    for (const QString& path : paths) {
        const QFileInfo info(path);
        if (info.isDir()) {  // File ▸ Open Folder…, a dropped folder: its snapshots and CSVs
            const QStringList inside = MultiImport::tracesInFolder(path);
            if (inside.isEmpty()) error(tr("Cannot open folder"), tr("%1 holds no snapshots or CSV logs (*.pickle, *.pkl, *.json, *.csv).").arg(path));
            traces << inside;
            continue;
        }
        if (!info.exists() || !info.isFile() || !info.isReadable()) {
            const QString why = !info.exists() ? tr("the file does not exist")
                                : !info.isFile() ? tr("it is not a regular file")
                                                 : tr("it cannot be read (permission denied)");
            error(tr("Cannot open file"), tr("AllocScope cannot open\n%1\nbecause %2.").arg(path, why));
            continue;
        }
        if (!SessionDocument::looksLikeSession(path)) {
            traces << info.absoluteFilePath();
            continue;
        }
        try {
            std::unique_ptr<SessionDocument> doc = SessionDocument::open(path);
            if (replaceDocument(std::move(doc))) {
                recent_->add(path);
                statusBar()->showMessage(tr("Opened %1").arg(info.absoluteFilePath()));
            }
        } catch (const storage::SessionError& e) {
            // An older schema is not an error to show but a copy to offer (SessionMigration).
            if (SessionMigration::offer(this, path, [this](const QString& copy) { openFile(copy); },
                                        [this](BackgroundJob* job) { jobs_->follow(job); })) {
                continue;
            }
            error(tr("Cannot open session"),
                  tr("AllocScope cannot open the session\n%1\n\n%2%3").arg(path, QString::fromStdString(e.problem()), where(e)));
        }
    }
    if (!traces.isEmpty()) importTraces(traces);
}

bool MainWindow::openSessionFile(const QString& path) {
    openFiles({path});
    return doc_ && QFileInfo(doc_->path()) == QFileInfo(path);
}

bool MainWindow::replaceDocument(std::unique_ptr<SessionDocument> doc) {
    cancelJobs();
    jobs_->stopAll();
    compare_->setSession(doc ? doc->path() : QString(), nullptr);
    service_->close();
    doc_ = std::move(doc);
    hasSelectedBlock_ = false;
    inspector_->clear();
    frame_ = RunStateFrame{};
    runList_->setRuns({});
    verdictBanner_->setRun(nullptr);
    segmentMap_->setData({});
    heatmap_->setData({});
    timelineData_ = {};
    timeline_->setData({});
    scrubber_->setEventCount(0);
    summary_->setData({});
    stacks_->clear();
    oom_->clear();
    pendingRun_ = -1;
    panel_->setRecordings({});
    updateTitle();
    updateActions();
    watcher_->watch(doc_ ? doc_->path() : QString());
    ranksController_->refresh();  // empties the Ranks tab until the new runs are read
    if (doc_) refreshRuns();
    return true;
}

void MainWindow::reload(bool reopenShownRun) {
    if (!doc_) return;
    refreshRuns();  // keeps the selected run
    if (!reopenShownRun || service_->run() <= 0) return;
    pendingEvent_ = scrubber_->currentEvent();  // a fresh reader, at the same event
    service_->openRun(doc_->path(), service_->run());
    allocationsLoader_->load(doc_->path(), service_->run());
}

bool MainWindow::newSession() {
    try {
        return replaceDocument(SessionDocument::createTemporary());
    } catch (const storage::SessionError& e) {
        error(tr("Cannot create a session"), tr("A new session could not be created: %1%2").arg(QString::fromStdString(e.problem()), where(e)));
        return false;
    }
}

bool MainWindow::ensureWritableDocument() {
    if (!doc_) return newSession();
    if (!doc_->writerIfOpen() && !doc_->isTemporary() &&
        !ReadOnlySessionPrompt::offerCopy(this, doc_->path(), [this](const QString& copy) { return saveSessionAs(copy); }))
        return false;
    try {
        const bool fresh = doc_->writerIfOpen() == nullptr;
        doc_->writer();
        compare_->setSession(doc_->path(), doc_->writerIfOpen());
        if (fresh && service_->run() > 0) {
            // The shown run was read through a connection that assumed nobody writes the file;
            // from now on the writer does: read it again through the write-ahead log.
            pendingEvent_ = scrubber_->currentEvent();
            service_->openRun(doc_->path(), service_->run());
        }
        return true;
    } catch (const storage::SessionError& e) {
        error(tr("Cannot record into the session"),
              tr("The session cannot be written: %1%2").arg(QString::fromStdString(e.problem()), where(e)));
        return false;
    }
}

void MainWindow::importTraces(const QStringList& paths) {
    try {
        const QString base = QFileInfo(paths.first()).completeBaseName();
        replaceDocument(SessionDocument::createTemporary(base));
    } catch (const storage::SessionError& e) {
        error(tr("Cannot import"), tr("A temporary session could not be created: %1%2").arg(QString::fromStdString(e.problem()), where(e)));
        return;
    }
    auto* job = MultiImport::create(&doc_->writer(), paths, [this](const MultiImport::Outcome& outcome) {
        if (!outcome.refused.isEmpty()) {
            // Posted: a modal box must not run inside the job's own delivery (the job is deleted when it finishes).
            const QString message = tr("%1 of %2 files were refused; the others were imported:\n\n%3")
                                        .arg(outcome.refused.size()).arg(outcome.files).arg(outcome.refused.join(QStringLiteral("\n")));
            QTimer::singleShot(0, this, [this, message] { error(tr("Some files were not imported"), message); });
        } else if (!outcome.diverged.isEmpty()) {
            statusBar()->showMessage(tr("Imported; the replay differed from the recording (%1)").arg(outcome.diverged.join(QStringLiteral("; "))));
        }
    }, this);
    startJob(job, tr("Imported %1 (a temporary session: File ▸ Save As keeps it)").arg(paths.size() == 1 ? paths.first() : tr("%1 files").arg(paths.size())));
}

void MainWindow::startJob(BackgroundJob* job, const QString& doneMessage) {
    panel_->setBusy(true);
    statusBar()->showMessage(job->title() + QStringLiteral("…"));
    jobs_->start(job, [this, title = job->title(), doneMessage](bool cancelled, const QString& failure) {
        panel_->setBusy(!jobs_->isEmpty() || compare_->isBusy());
        if (doc_) {
            try {
                doc_->flush();
            } catch (const storage::SessionError&) {
            }
        }
        refreshRuns(pendingRun_);
        if (!failure.isEmpty()) {
            error(tr("%1 failed").arg(title), failure);
        } else {
            statusBar()->showMessage(cancelled ? tr("%1: cancelled (what was done is kept)").arg(title) : doneMessage);
        }
        emit jobFinished(failure.isEmpty() && !cancelled);
    });
}

void MainWindow::cancelJobs() {
    jobs_->cancelAll();
    if (compare_->isBusy()) compare_->cancel();
}

void MainWindow::refreshRuns(int selectAfter) {
    if (!doc_) return;
    if (selectAfter > 0) pendingRun_ = selectAfter;
    const QString path = doc_->path();
    // The first read of a file just opened also checks every page (off the GUI thread).
    const bool verify = doc_->takeIntegrityCheck();
    auto* job = new BackgroundJob(tr("Reading runs"), [this, path, verify](BackgroundJob& self) {
        storage::SessionReader reader(path.toStdString(), false);
        const std::vector<storage::RunRow> rows = reader.runs();
        views::RunListData runs = toRunListData(rows);
        self.deliver([this, path, runs = std::move(runs)]() mutable {
            if (!doc_ || doc_->path() != path) return;
            runList_->setRuns(std::move(runs));
            emit runsChanged();
            int select = pendingRun_;
            if (select > 0 && runList_->model()->rowOfRun(select) < 0) select = -1;
            if (select < 0 && runList_->selectedRun() < 0 && !runList_->model()->runs().empty()) {
                select = runList_->model()->runs().front().number;
            }
            if (select > 0) {
                pendingRun_ = -1;
                runList_->selectRun(select);
            }
        });
        self.deliver([this, path, sources = RecordingCatalog::collect(rows)] {  // reads each trace file once
            if (doc_ && doc_->path() == path) panel_->setRecordings(sources);
        });
        // Then every page, once the runs are on screen: a failure closes the document.
        if (verify) storage::SessionSchema::checkIntact(path.toStdString());  // another process may write it
    }, this);
    connect(job, &BackgroundJob::failed, this, [this, path, verify](const QString& message) {
        if (!verify || !doc_ || doc_->path() != path) {
            statusBar()->showMessage(tr("Could not read the run list: %1").arg(message));
            return;
        }
        // A damaged file is refused as a whole, like one that fails the checks at open.
        replaceDocument(nullptr);
        error(tr("Cannot open session"), tr("AllocScope cannot open the session\n%1\n\n%2").arg(path, message));
    });
    connect(job, &BackgroundJob::finished, job, &QObject::deleteLater);
    job->start();
}

void MainWindow::updateTitle() {
    setWindowTitle(doc_ ? QStringLiteral("%1 — AllocScope").arg(doc_->displayName()) : QStringLiteral("AllocScope"));
}

void MainWindow::updateActions() {
    saveAsAction_->setEnabled(doc_ != nullptr);
    exportMenu_->setEnabled(doc_ != nullptr);
}

// ---- selection and scrubbing ----

void MainWindow::onRunSelected(int number) {
    if (!doc_ || number <= 0) return;
    if (number == service_->run() && service_->isLoadingOverview()) return;
    hasSelectedBlock_ = false;
    inspector_->clear();
    emptyHint_->hide();
    tabs_->show();
    verdictBanner_->showRun(runList_->model()->runs(), number);
    panel_->followRun(number, runList_->model()->runs());  // offers the run's recording, if any
    statusBar()->showMessage(tr("Loading run %1…").arg(number));
    service_->openRun(doc_->path(), number);
    allocationsLoader_->load(doc_->path(), number);
    search_->setRun(doc_->path(), number);
    oom_->setRun(doc_->path(), runList_->model()->runs(), number);
}

void MainWindow::onOverview(const RunOverview& overview) {
    timelineData_ = overview.timeline;
    timeline_->setData(timelineData_);
    heatmap_->setData(overview.heatmap);
    scrubber_->setPhaseStarts(overview.phaseStarts);
    stacks_->setRun(doc_->path(), overview.run, overview.eventCount, runList_->model()->runs());
    const qint64 target = pendingEvent_ >= 0 ? pendingEvent_ : views::peakEvent(overview.timeline, overview.eventCount);
    pendingEvent_ = -1;
    {
        // Setting the count moves to the last event; the state request follows below once.
        const QSignalBlocker block(scrubber_);
        scrubber_->setEventCount(overview.eventCount);
        scrubber_->setCurrentEvent(target);
    }
    if (overview.eventCount == 0) {
        segmentMap_->setData({});
        summary_->setData({});
        scrubber_->setInfoText(tr("this run has no events"));
        statusBar()->showMessage(tr("Run %1 has no allocator events").arg(overview.run));
        return;
    }
    heatmap_->setCurrentEvent(scrubber_->currentEvent());
    timeline_->setCurrentEvent(scrubber_->currentEvent());
    allocations_->setCurrentEvent(scrubber_->currentEvent());
    service_->requestState(scrubber_->currentEvent(), false);
    statusBar()->showMessage(tr("Run %1: %2 events").arg(overview.run).arg(views::Formatting::count(overview.eventCount)));
    if (compare_ && doc_) compare_->setCurrentOp(-1);
}

void MainWindow::onScrub(qint64 event, bool dragging) {
    heatmap_->setCurrentEvent(event);
    allocations_->setCurrentEvent(event);
    timeline_->setCurrentEvent(event);
    if (dragging) {
        settleTimer_->stop();
        service_->requestState(event, true);
    } else if (!scrubber_->isDragging()) {
        service_->requestState(event, false);
    }
}

void MainWindow::onState(const RunStateFrame& frame) {
    const bool firstOfRun = frame.run != frame_.run;
    frame_ = frame;
    segmentMap_->setData(frame.segments);
    if (firstOfRun && !frame.segments.segments.empty()) {
        // Rows are as wide as their segments; when one huge segment would make the typical one a
        // sliver, zoom so the median segment takes about half the width (the big one scrolls).
        std::vector<quint64> sizes;
        for (const views::ViewSegment& s : frame.segments.segments) sizes.push_back(s.totalSize);
        std::sort(sizes.begin(), sizes.end());
        const double median = static_cast<double>(sizes[sizes.size() / 2]);
        const double largest = static_cast<double>(sizes.back());
        segmentMap_->canvas()->setZoom(std::clamp(0.5 * largest / std::max(median, 1.0), 1.0, 16.0), 0);
        segmentMap_->canvas()->horizontalScrollBar()->setValue(0);  // rows start at their left edge
    }
    summary_->setData(frame.summary);
    QString info = tr("op %1 · %2").arg(views::Formatting::count(frame.op), frame.eventText);
    if (!frame.phase.isEmpty()) info += tr(" · phase %1").arg(frame.phase);
    if (frame.approximate) info = tr("approximate: keyframe at event %1").arg(views::Formatting::count(frame.shown));
    scrubber_->setInfoText(info);
    if (compare_) compare_->setCurrentOp(frame.op);
    if (!frame.approximate) stacks_->setEvent(frame.shown);  // after the segment map: it may select a block there
    if (hasSelectedBlock_) {
        if (segmentMap_->selectBlock(selectedBlock_)) {
            if (!frame.approximate) service_->requestBlock(selectedBlock_, frame.shown);
        } else {
            inspector_->clear(tr("The selected block (%1) does not exist at event %2.")
                                  .arg(views::Formatting::address(selectedBlock_), views::Formatting::count(frame.shown)));
        }
    }
    emit stateShown();
}

// The Allocations tab (Ctrl+5): its data loads beside the run's overview; a click on a band
// selects that block at an event of its lifetime, as a click in the segment map would.
void MainWindow::wireAllocations() {
    allocations_ = new views::AllocationsWidget(tabs_);
    allocationsLoader_ = new AllocationsController(this);
    tabs_->insertTab(tabs_->indexOf(compare_) + 1, allocations_, tr("&Allocations"));  // Ctrl+5, before Stacks
    tabs_->setTabToolTip(tabs_->indexOf(allocations_), tr("Every large allocation a band over time, stacked in allocation order, coloured by call site (Ctrl+5)"));
    connect(allocationsLoader_, &AllocationsController::started, allocations_, [this] { allocations_->showLoading(tr("Loading allocations…")); });
    connect(allocationsLoader_, &AllocationsController::ready, allocations_, [this](int run, const views::AllocationsData& loaded) {
        if (run != service_->run()) return;
        allocations_->setData(loaded);
        allocations_->setCurrentEvent(scrubber_->currentEvent());
        search_->refresh();
    });
    connect(allocationsLoader_, &AllocationsController::failed, this, [this](int, const QString& message) { allocations_->showLoading(message); });
    connect(allocations_, &views::AllocationsWidget::eventRequested, scrubber_, &views::EventScrubber::setCurrentEvent);
    search_ = new SearchController({tabs_, allocations_, segmentMap_, heatmap_}, this);
    connect(search_, &SearchController::statusMessage, this, [this](const QString& text) { statusBar()->showMessage(text); });
    connect(allocations_, &views::AllocationsWidget::blockRequested, this, [this](quint64 address, qint64 event) {
        selectedBlock_ = address;
        hasSelectedBlock_ = true;
        if (event != scrubber_->currentEvent()) scrubber_->setCurrentEvent(event);  // onState selects it there
        else selectBlock(address);
    });
}

void MainWindow::onBlockSelected(quint64 address) {
    selectedBlock_ = address;
    hasSelectedBlock_ = true;
    service_->requestBlock(address, frame_.shown);
    if (auto* dock = qobject_cast<QDockWidget*>(inspector_->parentWidget())) dock->raise();
}

// ---- LessonNavigator ----

void MainWindow::selectRun(int number) {
    if (runList_->model()->rowOfRun(number) >= 0) {
        runList_->selectRun(number);
    } else {
        pendingRun_ = number;  // the run list is still loading
    }
}

void MainWindow::goToEvent(qint64 seq) {
    if (service_->isLoadingOverview() || scrubber_->eventCount() == 0) {
        pendingEvent_ = seq;
        return;
    }
    scrubber_->setCurrentEvent(seq);
}

void MainWindow::showView(const QString& name) {
    const QString n = name.toLower();
    oom_->keepChosenView();  // a lesson's or --view's choice is not overridden by an OOM run selected after it
    if (n == QLatin1String("segments")) tabs_->setCurrentWidget(segmentMap_);
    else if (n == QLatin1String("heatmap")) tabs_->setCurrentWidget(heatmap_);
    else if (n == QLatin1String("timeline")) tabs_->setCurrentWidget(timeline_);
    else if (n == QLatin1String("compare")) tabs_->setCurrentWidget(compare_);
    else if (n == QLatin1String("allocations")) tabs_->setCurrentWidget(allocations_);
    else if (n == QLatin1String("stacks") || n == QLatin1String("tensors")) stacks_->bringToFront(n == QLatin1String("tensors"));
    else if (n == QLatin1String("ranks")) tabs_->setCurrentWidget(ranks_);
    else if (n == QLatin1String("oom")) oom_->bringToFront();
    else if (n == QLatin1String("summary")) {
        if (auto* dock = qobject_cast<QDockWidget*>(summary_->parentWidget())) {
            dock->show();
            dock->raise();
        }
    } else if (n == QLatin1String("inspector")) {
        if (auto* dock = qobject_cast<QDockWidget*>(inspector_->parentWidget())) {
            dock->show();
            dock->raise();
        }
    }
}

void MainWindow::selectBlock(quint64 address) {
    for (const views::ViewSegment& segment : segmentMap_->data().segments) {
        for (const views::ViewBlock& block : segment.blocks) {
            if (address >= block.address && address < block.address + block.size && block.state != views::BlockState::Unmapped) {
                segmentMap_->selectBlock(block.address);
                onBlockSelected(block.address);
                return;
            }
        }
    }
}

void MainWindow::showComparison(const QList<int>& runs) {
    if (!doc_) return;
    compare_->setSession(doc_->path(), doc_->writerIfOpen());
    compare_->showRuns(runs);
    emptyHint_->hide();
    tabs_->show();
    tabs_->setCurrentWidget(compare_);
}

// ---- run, compare ----

void MainWindow::runExperiment() {
    QString why;
    const std::optional<RunChoice> choice = panel_->choice(&why);
    if (!choice) {
        error(tr("Cannot run"), why);
        return;
    }
    const alloc::ParseResult parsed = alloc::parseConfig(choice->config.toStdString());
    if (parsed.config.backend == alloc::Backend::CudaMallocAsync) {
        error(tr("Cannot record"), choice->whatIf ? tr("backend:cudaMallocAsync keeps no segments: a recording cannot be replayed into it.")
                                                  : tr("backend:cudaMallocAsync keeps no segments to record; use Compare to measure it."));
        return;
    }
    if (!ensureWritableDocument()) return;
    if (const std::optional<WhatIfSetup>& whatIf = choice->whatIf) {  // "This recording": replayed, as `allocscope-cli replay --config`
        startJob(WhatIfReplay::runJob(doc_->writer(), *whatIf, [this](int run) { pendingRun_ = run; }, this), tr("Recorded %1").arg(whatIf->runName()));
        return;
    }
    auto* job = WorkloadRun::job(doc_->writer(), *choice, parsed.config, [this](int run, const QString& oom) {
        pendingRun_ = run;
        if (!oom.isEmpty()) statusBar()->showMessage(tr("Run %1 hit an OOM: %2").arg(run).arg(oom.left(200)));
    }, this);
    startJob(job, tr("Recorded %1 under %2").arg(choice->workload, choice->config.isEmpty() ? tr("the default config") : choice->config));
}

void MainWindow::compareExperiment() {
    QString why;
    const std::optional<RunChoice> choice = panel_->choice(&why);
    if (!choice) {
        error(tr("Cannot compare"), why);
        return;
    }
    if (!ensureWritableDocument()) return;
    CompareRequest request;
    request.workload = choice->workload;
    request.params = choice->params;
    request.seed = choice->seed;
    request.gpuPreset = panel_->gpuPresetName();
    request.configs = panel_->compareConfigs();
    request.recording = choice->whatIf;  // "This recording": each config replays it
    compare_->setSession(doc_->path(), &doc_->writer());
    emptyHint_->hide();
    tabs_->show();
    tabs_->setCurrentWidget(compare_);
    panel_->setBusy(true);
    compare_->startCompare(request);
}

// ---- save, export ----

void MainWindow::showSaveAsDialog() {
    if (!doc_) return;
    QString path = QFileDialog::getSaveFileName(this, tr("Save Session As"), QString(), tr("Sessions (*.allocscope)"));
    if (path.isEmpty()) return;
    if (QFileInfo(path).suffix().isEmpty()) path += QStringLiteral(".allocscope");
    saveSessionAs(path);
}

bool MainWindow::saveSessionAs(const QString& path) {
    if (!doc_) return false;
    if (isBusy()) {
        error(tr("Cannot save now"), tr("A job is still recording into the session; wait for it or cancel it, then save."));
        return false;
    }
    QString why;
    if (!doc_->saveAs(path, &why)) {
        error(tr("Save failed"), why);
        return false;
    }
    compare_->setSession(doc_->path(), nullptr);
    watcher_->watch(doc_->path());
    recent_->add(doc_->path());
    updateTitle();
    if (service_->run() > 0) {
        pendingEvent_ = scrubber_->currentEvent();
        service_->openRun(doc_->path(), service_->run());  // the saved copy is the document now
    }
    statusBar()->showMessage(tr("Saved %1").arg(doc_->path()));
    return true;
}

bool MainWindow::exportCurrentView(const QString& path) { return exports_->exportCurrentView(path); }
bool MainWindow::exportTimelineCsv(const QString& path) { return exports_->exportTimelineCsv(path); }
bool MainWindow::exportRunTableCsv(const QString& path) { return exports_->exportRunTableCsv(path); }
void MainWindow::exportSnapshotPickle(const QString& path) { exports_->exportSnapshotPickle(path); }

// ---- theme, window ----

void MainWindow::setTheme(views::ThemeChoice choice) { themeMenu_->apply(choice); }

void MainWindow::showAbout() {
    QMessageBox::about(this, tr("About AllocScope"),
                       tr("<h3>AllocScope %1</h3><p>A desktop lab for the PyTorch CUDA caching allocator: "
                          "run workloads through a faithful reimplementation, record every event, and see "
                          "why GPU memory fragments.</p>")
                           .arg(QStringLiteral(ALLOCSCOPE_VERSION)));
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (event->mimeData()->hasUrls()) {
        for (const QUrl& url : event->mimeData()->urls()) {
            if (url.isLocalFile()) {
                event->acceptProposedAction();
                return;
            }
        }
    }
}

void MainWindow::dropEvent(QDropEvent* event) {
    QStringList paths;
    for (const QUrl& url : event->mimeData()->urls()) {
        if (url.isLocalFile()) paths << url.toLocalFile();
    }
    if (paths.isEmpty()) return;
    event->acceptProposedAction();
    // Opening may show a message box: not inside the drop handler (the drag source waits).
    QTimer::singleShot(0, this, [this, paths] { openFiles(paths); });
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (doc_ && doc_->isTemporary() && runList_->model()->rowCount() > 0) {
        // A temporary session lives only until the window closes: offer to keep it.
        const auto answer = QMessageBox::question(
            this, tr("Keep this session?"),
            tr("The session %1 is temporary: its %2 will be lost when AllocScope closes.\nSave it first?")
                .arg(doc_->displayName(), views::Formatting::counted(runList_->model()->rowCount(), tr("run"), tr("runs"))),
            QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
        if (answer == QMessageBox::Cancel) {
            event->ignore();
            return;
        }
        if (answer == QMessageBox::Save) {
            cancelJobs();
            jobs_->waitAll();
            const QString path = QFileDialog::getSaveFileName(this, tr("Save Session As"), QString(), tr("Sessions (*.allocscope)"));
            if (path.isEmpty() || !saveSessionAs(QFileInfo(path).suffix().isEmpty() ? path + QStringLiteral(".allocscope") : path)) {
                event->ignore();
                return;
            }
        }
    }
    QSettings settings;
    settings.setValue(kGeometryKey, saveGeometry());
    settings.setValue(kStateKey, saveState());
    cancelJobs();
    event->accept();
}

}  // namespace allocscope::app
