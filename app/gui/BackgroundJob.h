#pragma once
// One piece of long work (a run, an import, a query) on its own thread, so the GUI thread only
// paints. The work function gets the job: it reports progress, checks for cancel, and hands
// results to the GUI thread with deliver() (queued: the callback runs in the GUI thread's event
// loop, never concurrently with painting). finished() is emitted on the GUI thread after the
// work returned; failed(message) when it threw.
#include <QObject>
#include <QString>

#include <atomic>
#include <functional>

class QThread;

namespace allocscope::app {

class BackgroundJob : public QObject {
    Q_OBJECT
public:
    using Work = std::function<void(BackgroundJob& job)>;

    BackgroundJob(QString title, Work work, QObject* parent = nullptr);
    ~BackgroundJob() override;  // cancels and waits for the thread

    const QString& title() const { return title_; }
    void start();
    void cancel() { cancelled_.store(true); }
    bool isCancelled() const { return cancelled_.load(); }
    bool isRunning() const;
    void wait();

    // From the work function (any thread).
    void reportProgress(quint64 done, quint64 total);
    void deliver(std::function<void()> onGuiThread);

signals:
    void progress(int percent);  // 0..100, throttled to changes of a percent
    void failed(const QString& message);
    void finished();

private:
    QString title_;
    Work work_;
    QThread* thread_ = nullptr;
    std::atomic<bool> cancelled_{false};
    std::atomic<int> lastPercent_{-1};
};

}  // namespace allocscope::app
