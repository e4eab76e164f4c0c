#pragma once
// The window's background jobs (runs, imports, exports; BackgroundJob) and what the status bar shows
// of them: a progress bar and a Cancel button, visible while any job runs. Cancel stops every job;
// what a cancelled job recorded so far is kept (marked interrupted). A job owned elsewhere (a
// session migration) can borrow the same bar and button (follow()).
#include <QList>
#include <QObject>
#include <QString>

#include <functional>

class QProgressBar;
class QPushButton;
class QStatusBar;

namespace allocscope::app {

class BackgroundJob;

class JobTracker : public QObject {
public:
    // What a job that finished ended as: cancelled, or failed with `error` ("" when it did not).
    using Done = std::function<void(bool cancelled, const QString& error)>;

    // Adds the bar and the button to `bar` (hidden until a job starts). Cancel also calls
    // `cancelOthers` (work the window runs outside these jobs: the Compare tab's).
    JobTracker(QStatusBar* bar, std::function<void()> cancelOthers, QObject* parent);

    // Starts `job`, which the tracker deletes once it has finished. `done` runs on the GUI thread
    // after the job has left the list (isEmpty() is already true for the last one).
    void start(BackgroundJob* job, Done done);
    // Shows the progress of a job the tracker does not own; Cancel cancels it too.
    void follow(BackgroundJob* job);
    void cancelAll();
    void waitAll();
    // Cancels every job, waits for it and deletes it: before the session they write goes away.
    void stopAll();
    bool isEmpty() const { return jobs_.isEmpty(); }

private:
    void showProgress(BackgroundJob* job);
    void hideIfIdle();

    QList<BackgroundJob*> jobs_;
    QProgressBar* progress_ = nullptr;
    QPushButton* cancel_ = nullptr;
    std::function<void()> cancelOthers_;
};

}  // namespace allocscope::app
