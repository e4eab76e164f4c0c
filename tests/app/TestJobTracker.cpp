#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QStatusBar>
#include <QtTest>

#include <atomic>
#include <stdexcept>
#include <thread>

#include "app/gui/BackgroundJob.h"
#include "app/gui/JobTracker.h"

using allocscope::app::BackgroundJob;
using allocscope::app::JobTracker;

// The status bar's progress bar and Cancel button that follow the window's background jobs.
class TestJobTracker : public QObject {
    Q_OBJECT

    // A job at 25 % that runs until it is cancelled.
    static BackgroundJob* untilCancelled() {
        return new BackgroundJob(QStringLiteral("long"), [](BackgroundJob& self) {
            self.reportProgress(1, 4);
            while (!self.isCancelled()) std::this_thread::yield();
        });
    }

    struct Shown {
        QProgressBar* progress = nullptr;
        QPushButton* cancel = nullptr;
    };
    static Shown shown(QStatusBar& bar) {
        const auto bars = bar.findChildren<QProgressBar*>();
        const auto buttons = bar.findChildren<QPushButton*>();
        if (bars.size() != 1 || buttons.size() != 1) qFatal("expected one progress bar and one button in the status bar");
        return {bars.front(), buttons.front()};
    }

private slots:
    void cancelStopsEveryJobAndTheOtherWork() {
        QStatusBar bar;
        bool othersCancelled = false;
        JobTracker tracker(&bar, [&] { othersCancelled = true; }, nullptr);
        const Shown s = shown(bar);
        QVERIFY(s.progress->isHidden());
        QVERIFY(s.cancel->isHidden());
        QVERIFY(tracker.isEmpty());

        int done = 0;
        bool cancelled = false;
        QString error = QStringLiteral("unset");
        QPointer<BackgroundJob> job = untilCancelled();
        tracker.start(job, [&](bool c, const QString& e) {
            ++done;
            cancelled = c;
            error = e;
        });
        QVERIFY(!tracker.isEmpty());
        QVERIFY(!s.progress->isHidden());
        QVERIFY(!s.cancel->isHidden());
        QTRY_COMPARE(s.progress->value(), 25);

        s.cancel->click();
        QVERIFY(othersCancelled);
        QTRY_COMPARE(done, 1);
        QVERIFY(cancelled);
        QVERIFY(error.isEmpty());
        QVERIFY(tracker.isEmpty());
        QVERIFY(s.progress->isHidden());
        QVERIFY(s.cancel->isHidden());
        QTRY_VERIFY(job.isNull());  // the tracker deleted it
    }

    void aFailureReachesDoneWithItsMessage() {
        QStatusBar bar;
        JobTracker tracker(&bar, {}, nullptr);
        bool cancelled = true;
        QString error;
        bool done = false;
        tracker.start(new BackgroundJob(QStringLiteral("bad"), [](BackgroundJob&) { throw std::runtime_error("disk full"); }),
                      [&](bool c, const QString& e) {
                          done = true;
                          cancelled = c;
                          error = e;
                      });
        QTRY_VERIFY(done);
        QVERIFY(!cancelled);
        QCOMPARE(error, QStringLiteral("disk full"));
        QVERIFY(shown(bar).progress->isHidden());
    }

    void theBarStaysWhileAnotherJobRuns() {
        QStatusBar bar;
        JobTracker tracker(&bar, {}, nullptr);
        const Shown s = shown(bar);
        bool quickDone = false;
        tracker.start(untilCancelled(), {});
        tracker.start(new BackgroundJob(QStringLiteral("quick"), [](BackgroundJob&) {}), [&](bool, const QString&) { quickDone = true; });
        QTRY_VERIFY(quickDone);
        QVERIFY(!tracker.isEmpty());
        QVERIFY(!s.progress->isHidden());  // the long job still runs
        tracker.stopAll();
        QVERIFY(tracker.isEmpty());
    }

    void aFollowedJobIsCancelledButNotOwned() {
        QStatusBar bar;
        JobTracker tracker(&bar, {}, nullptr);
        const Shown s = shown(bar);
        BackgroundJob* foreign = untilCancelled();
        QSignalSpy finished(foreign, &BackgroundJob::finished);
        tracker.follow(foreign);
        foreign->start();
        QVERIFY(!s.progress->isHidden());
        QVERIFY(tracker.isEmpty());  // not the tracker's
        s.cancel->click();
        QTRY_COMPARE(finished.count(), 1);
        QVERIFY(foreign->isCancelled());
        QVERIFY(s.progress->isHidden());
        delete foreign;  // still alive: owned here
    }

    void stopAllCancelsWaitsAndDeletesWithoutDone() {
        QStatusBar bar;
        JobTracker tracker(&bar, {}, nullptr);
        bool done = false;
        QPointer<BackgroundJob> job = untilCancelled();
        tracker.start(job, [&](bool, const QString&) { done = true; });
        tracker.stopAll();
        QVERIFY(job.isNull());
        QVERIFY(tracker.isEmpty());
        QCoreApplication::processEvents();
        QVERIFY(!done);
    }
};

QTEST_MAIN(TestJobTracker)
#include "TestJobTracker.moc"
