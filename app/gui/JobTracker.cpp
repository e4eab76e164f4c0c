#include "app/gui/JobTracker.h"

#include <QProgressBar>
#include <QPushButton>
#include <QStatusBar>

#include <memory>
#include <utility>

#include "app/gui/BackgroundJob.h"

namespace allocscope::app {

JobTracker::JobTracker(QStatusBar* bar, std::function<void()> cancelOthers, QObject* parent)
    : QObject(parent),
      progress_(new QProgressBar(bar)),
      cancel_(new QPushButton(tr("Cancel"), bar)),
      cancelOthers_(std::move(cancelOthers)) {
    progress_->setMaximumWidth(200);
    progress_->setRange(0, 100);
    progress_->setToolTip(tr("Progress of the running job"));
    progress_->hide();
    cancel_->setToolTip(tr("Stop the running job (what was recorded so far is kept, marked interrupted)"));
    cancel_->hide();
    connect(cancel_, &QPushButton::clicked, this, [this] {
        cancelAll();
        if (cancelOthers_) cancelOthers_();
    });
    bar->addPermanentWidget(progress_);
    bar->addPermanentWidget(cancel_);
}

void JobTracker::showProgress(BackgroundJob* job) {
    progress_->setValue(0);
    progress_->show();
    cancel_->show();
    connect(job, &BackgroundJob::progress, progress_, &QProgressBar::setValue);
}

void JobTracker::hideIfIdle() {
    if (!jobs_.isEmpty()) return;
    progress_->hide();
    cancel_->hide();
}

void JobTracker::start(BackgroundJob* job, Done done) {
    jobs_.append(job);
    showProgress(job);
    // failed() comes before finished(): keep its message for `done`.
    auto error = std::make_shared<QString>();
    connect(job, &BackgroundJob::failed, this, [error](const QString& message) { *error = message; });
    connect(job, &BackgroundJob::finished, this, [this, job, error, done = std::move(done)] {
        jobs_.removeAll(job);
        job->deleteLater();
        hideIfIdle();
        if (done) done(job->isCancelled(), *error);
    });
    job->start();
}

void JobTracker::follow(BackgroundJob* job) {
    showProgress(job);
    connect(cancel_, &QPushButton::clicked, job, &BackgroundJob::cancel);
    connect(job, &BackgroundJob::finished, this, &JobTracker::hideIfIdle);
}

void JobTracker::cancelAll() {
    for (BackgroundJob* job : jobs_) job->cancel();
}

void JobTracker::waitAll() {
    for (BackgroundJob* job : jobs_) job->wait();
}

void JobTracker::stopAll() {
    cancelAll();
    waitAll();
    qDeleteAll(jobs_);
    jobs_.clear();
}

}  // namespace allocscope::app
