#include "app/gui/RanksController.h"

#include "app/gui/BackgroundJob.h"
#include "app/gui/ViewDataAdapters.h"
#include "storage/session/SessionReader.h"
#include "views/widgets/RanksWidget.h"

namespace allocscope::app {

RanksController::RanksController(views::RanksWidget* view, Hooks hooks, QObject* parent)
    : QObject(parent), view_(view), hooks_(std::move(hooks)) {
    connect(view_, &views::RanksWidget::thresholdChanged, this, [this](double) { show(); });
    connect(view_, &views::RanksWidget::runActivated, this, &RanksController::open);
}

RanksController::~RanksController() {
    if (job_ == nullptr) return;
    disconnect(job_, nullptr, this, nullptr);  // it is deleted with its parent, this
    job_->cancel();
}

void RanksController::refresh() {
    const QString path = hooks_.sessionPath();
    const quint64 generation = ++generation_;
    if (path.isEmpty()) {
        runs_.clear();
        show();
        return;
    }
    // One query of the run table; a newer refresh supersedes an older one still reading.
    auto* job = new BackgroundJob(tr("Reading ranks"), [this, path, generation](BackgroundJob& self) {
        std::vector<storage::RunRow> runs = storage::SessionReader(path.toStdString(), false).runs();
        self.deliver([this, generation, runs = std::move(runs)]() mutable {
            if (generation != generation_) return;
            runs_ = std::move(runs);
            show();
        });
    }, this);
    connect(job, &BackgroundJob::failed, this, [this](const QString& message) {
        if (hooks_.status) hooks_.status(tr("Could not read the ranks: %1").arg(message));
    });
    connect(job, &BackgroundJob::finished, job, &QObject::deleteLater);
    connect(job, &QObject::destroyed, this, [this, job] {
        if (job_ == job) job_ = nullptr;
    });
    job_ = job;
    job->start();
}

void RanksController::show() {
    view_->setData(toViewData(storage::RankOverview::build(runs_, view_->threshold())));
    emit updated();
}

void RanksController::open(int run) {
    const int median = view_->data().medianRun;
    if (median <= 0) {
        if (hooks_.status) hooks_.status(tr("No complete run to compare with: there is no median rank."));
        return;
    }
    if (run == median) {
        if (hooks_.status) hooks_.status(tr("Run %1 is the median rank; click another rank to compare it with this one.").arg(run));
        return;
    }
    hooks_.compare({run, median});
}

views::RanksData RanksController::toViewData(const storage::RankOverviewData& overview) {
    views::RanksData data;
    data.medianRun = overview.medianRun;
    data.medianPeakReserved = overview.medianPeakReserved;
    data.threshold = overview.threshold;
    for (const storage::RankRow& r : overview.rows) {
        views::RankRowData row;
        storage::RunRow run;
        run.number = r.run;
        run.info.name = r.name;
        run.verdict = storage::RunVerdict{r.verdict, r.verdictText, r.verdictEntry};
        row.run = toRunListRow(run);
        if (r.rank) {
            row.rank = r.rank->rank;
            row.rankSource = QString::fromStdString(r.rank->source);
        }
        row.complete = r.complete;
        row.peakReserved = r.peakReserved;
        row.peakAllocated = r.peakAllocated;
        row.fragmentationAtPeak = r.fragmentationAtPeak;
        row.retries = r.retries;
        row.ooms = r.ooms;
        row.aboveMedian = r.aboveMedian;
        row.oomOutlier = r.oomOutlier;
        row.reservedOutlier = r.reservedOutlier;
        data.rows.push_back(std::move(row));
    }
    return data;
}

}  // namespace allocscope::app
