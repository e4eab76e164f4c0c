#include "app/gui/LiveRunFollower.h"

#include <QLabel>
#include <QPointer>
#include <QStatusBar>

#include <algorithm>

#include "app/gui/AllocationsController.h"
#include "app/gui/BackgroundJob.h"
#include "app/gui/RunStateService.h"
#include "app/gui/SessionWatcher.h"
#include "storage/session/SessionReader.h"
#include "views/util/Formatting.h"
#include "views/widgets/AllocationsPlot.h"
#include "views/widgets/AllocationsWidget.h"
#include "views/widgets/EventScrubber.h"
#include "views/widgets/RunListModel.h"

namespace allocscope::app {

LiveRunFollower::LiveRunFollower(Parts parts, QObject* parent) : QObject(parent), parts_(std::move(parts)) {
    label_ = new QLabel(parts_.statusBar);
    label_->setObjectName(QStringLiteral("liveRunLabel"));
    label_->setTextFormat(Qt::RichText);
    label_->hide();
    parts_.statusBar->addPermanentWidget(label_);

    connect(parts_.watcher, &SessionWatcher::changed, this, &LiveRunFollower::check);
    // After the window's own slot: the scrubber already stands where the overview put it.
    connect(parts_.service, &RunStateService::overviewReady, this, &LiveRunFollower::onOverview);
    connect(parts_.service, &RunStateService::markersReady, this, [this](int run) {
        if (run != run_) return;
        awaitingMarkers_ = false;
        if (pending_) check();
    });
    connect(parts_.service, &RunStateService::failed, this, [this] { awaitingMarkers_ = false; });
    connect(parts_.scrubber, &views::EventScrubber::eventChanged, this, [this] { userMoved_ = true; });
    connect(parts_.scrubber, &views::EventScrubber::dragFinished, this, [this] {
        if (pending_) check();
    });
    // After the window's own slot, which shows the new bands over the whole run.
    connect(parts_.allocations, &AllocationsController::ready, this, [this](int run) {
        if (allocationsWindow_ && run == run_) parts_.allocationsView->plot()->setWindow(allocationsWindow_->first, allocationsWindow_->second);
        allocationsWindow_.reset();
    });
}

LiveRunFollower::~LiveRunFollower() { delete probe_; }

void LiveRunFollower::check() {
    // A run the file says has ended does not change any more: not even probed.
    if (run_ <= 0 || !recording_ || run_ != parts_.service->run()) return;
    if (probe_ != nullptr || parts_.service->isLoadingOverview() || awaitingMarkers_ || parts_.scrubber->isDragging()) {
        pending_ = true;  // looked at once the probe, the re-query or its markers are done, or the drag ends
        return;
    }
    pending_ = false;
    startProbe();
}

void LiveRunFollower::syncShownRun() {
    if (run_ > 0 && (parts_.service->run() != run_ || parts_.sessionPath() != path_)) {
        run_ = -1;
        recording_ = false;
    }
    updateLabel();
}

void LiveRunFollower::onOverview(const RunOverview& overview) {
    const QString path = parts_.sessionPath();
    const bool sameRun = overview.run == run_ && path == path_;
    const bool ours = refreshing_ && sameRun;
    const bool ended = sameRun && recording_ && !overview.recording;
    if (!sameRun) {
        grew_ = false;
        userMoved_ = false;
        endedAs_.clear();
    } else if (overview.eventCount > events_) {
        grew_ = true;
    }
    path_ = path;
    run_ = overview.run;
    events_ = overview.eventCount;
    recording_ = overview.recording;
    refreshing_ = false;
    awaitingMarkers_ = overview.eventCount > 0;  // RunStateService scans for them next
    if (ours && ended) {
        endedAs_ = overview.complete ? tr("finished recording") : tr("stopped recording without finishing (interrupted)");
        parts_.statusBar->showMessage(tr("Run %1 %2: %3 events").arg(run_).arg(endedAs_, views::Formatting::count(events_)));
    }
    updateLabel();
    if (pending_) check();
}

void LiveRunFollower::startProbe() {
    ++probes_;
    const QString path = path_;
    const int run = run_;
    QPointer<LiveRunFollower> self(this);
    auto* job = new BackgroundJob(
        tr("Checking run %1").arg(run),
        [self, path, run](BackgroundJob& probe) {
            storage::SessionReader reader(path.toStdString(), false);
            const storage::RunProgress progress = storage::RunProgress::read(reader, run);
            probe.deliver([self, path, run, progress] {
                if (self) self->onProgress(path, run, progress);
            });
        },
        this);
    probe_ = job;
    connect(job, &BackgroundJob::finished, this, [this, job] {
        if (probe_ == job) probe_ = nullptr;
        job->deleteLater();
        if (pending_) check();
    });
    job->start();
}

void LiveRunFollower::onProgress(const QString& path, int run, const storage::RunProgress& progress) {
    if (path != path_ || run != run_ || run != parts_.service->run() || path != parts_.sessionPath()) return;
    if (progress.events == static_cast<std::uint64_t>(events_) && !progress.ended) return;  // unchanged: not re-queried
    if (parts_.scrubber->isDragging() || parts_.service->isLoadingOverview()) {
        pending_ = true;
        return;
    }
    refresh(progress);
}

void LiveRunFollower::refresh(const storage::RunProgress& progress) {
    ++refreshes_;
    const qint64 last = parts_.scrubber->eventCount() - 1;
    const qint64 current = parts_.scrubber->currentEvent();
    // At the live edge (or never moved since the run opened): follow the newest event.
    const bool follow = !userMoved_ || current >= last;
    const qint64 target = follow ? std::max<qint64>(static_cast<qint64>(progress.events) - 1, 0) : current;
    const views::AllocationsPlot* plot = parts_.allocationsView->plot();
    const auto total = static_cast<double>(plot->data().eventCount);
    if (total > 0 && (plot->windowFirst() > 0 || plot->windowLast() < total)) {
        allocationsWindow_ = std::make_pair(plot->windowFirst(), plot->windowLast());
    } else {
        allocationsWindow_.reset();  // the whole run: it grows with the run
    }
    refreshing_ = true;
    parts_.service->openRun(path_, run_);
    parts_.goToEvent(target);  // the overview being loaded lands there
    parts_.allocations->refresh(path_, run_);
}

void LiveRunFollower::updateLabel() {
    // Only over the file's reading of "not ended": a run list read after the run finished says
    // "complete" before the last re-query has told this follower so.
    const int row = parts_.runs->rowOfRun(run_);
    if (isLive() && row >= 0 && parts_.runs->runs()[static_cast<std::size_t>(row)].status == QLatin1String("interrupted")) {
        parts_.runs->setRunStatus(run_, QStringLiteral("recording"));
    }
    // Shown for a run the file calls unended, and, once such a run ended while shown, what it
    // ended as (a message in the status bar alone is gone with the next hover).
    const bool show = run_ > 0 && (recording_ || !endedAs_.isEmpty());
    label_->setVisible(show);
    if (!show) return;
    const QString count = views::Formatting::count(events_);
    if (!recording_) {
        label_->setText(tr("run %1 %2 — %3 events").arg(run_).arg(endedAs_, count));
        label_->setToolTip(tr("The recording ended while shown: the views show its final state."));
    } else if (grew_) {
        label_->setText(tr("<span style=\"color:#d33\">●</span> run %1 recording — %2 events so far").arg(run_).arg(count));
        label_->setToolTip(tr("Another process is recording this run: the views follow it as it grows "
                              "(at the last event, they move with it; at an earlier event, they stay there)."));
    } else {
        label_->setText(tr("run %1 unfinished — %2 events").arg(run_).arg(count));
        label_->setToolTip(tr("The session says this run is still being recorded: another process records it "
                              "(the views follow it once it grows), or its recorder stopped without finishing."));
    }
}

}  // namespace allocscope::app
