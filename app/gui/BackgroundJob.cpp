#include "app/gui/BackgroundJob.h"

#include <QMetaObject>
#include <QPointer>
#include <QThread>

#include <exception>

namespace allocscope::app {

BackgroundJob::BackgroundJob(QString title, Work work, QObject* parent)
    : QObject(parent), title_(std::move(title)), work_(std::move(work)) {}

BackgroundJob::~BackgroundJob() {
    cancel();
    wait();
}

void BackgroundJob::start() {
    if (thread_ != nullptr) return;
    thread_ = QThread::create([this] {
        try {
            work_(*this);
        } catch (const std::exception& e) {
            const QString message = QString::fromUtf8(e.what());
            QMetaObject::invokeMethod(this, [this, message] { emit failed(message); }, Qt::QueuedConnection);
        } catch (...) {
            QMetaObject::invokeMethod(this, [this] { emit failed(tr("unexpected error in %1").arg(title_)); }, Qt::QueuedConnection);
        }
    });
    thread_->setObjectName(title_);
    // The thread's finished() comes from the thread itself: hop to the GUI thread before telling.
    connect(thread_, &QThread::finished, this, [this] { emit finished(); }, Qt::QueuedConnection);
    thread_->start();
}

bool BackgroundJob::isRunning() const { return thread_ != nullptr && thread_->isRunning(); }

void BackgroundJob::wait() {
    if (thread_ == nullptr) return;
    thread_->wait();
    delete thread_;
    thread_ = nullptr;
}

void BackgroundJob::reportProgress(quint64 done, quint64 total) {
    const int percent = total == 0 ? 0 : static_cast<int>(std::min<quint64>(100, done * 100 / total));
    if (lastPercent_.exchange(percent) == percent) return;
    QMetaObject::invokeMethod(this, [this, percent] { emit progress(percent); }, Qt::QueuedConnection);
}

void BackgroundJob::deliver(std::function<void()> onGuiThread) {
    QMetaObject::invokeMethod(this, std::move(onGuiThread), Qt::QueuedConnection);
}

}  // namespace allocscope::app
