// The lesson controller against a fake main window: a lesson runs on a worker thread, its runs are
// recorded into a session holding exactly the events that were measured, and each step moves the
// window to the step's run, event, view and block.
#include <QSignalSpy>
#include <QtTest>

#include "FakeNavigator.h"
#include "LessonTestSupport.h"
#include "app/gui/LessonController.h"
#include "storage/session/SessionReader.h"

using namespace allocscope;

class TestLessonController : public QObject {
    Q_OBJECT

    static void runToEnd(app::LessonController& c, const QString& name) {
        QSignalSpy finished(&c, &app::LessonController::finished);
        QSignalSpy failed(&c, &app::LessonController::failed);
        const int index = c.indexOf(name);
        QVERIFY(index >= 0);
        c.start(index);
        QVERIFY(c.isRunning());
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() + failed.count() > 0, 120000);
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().first().toString()));
    }

private slots:
    void initTestCase() { qRegisterMetaType<views::LessonData>(); }

    void stepsDriveTheWindowToTheMeasuredEvents() {
        FakeNavigator nav;
        app::LessonController c(&nav);
        QVERIFY(c.loadLessons(QString::fromStdString(lessontest::lessonsDir())));
        QCOMPARE(c.lessonCount(), 13);
        runToEnd(c, "expandable-segments");
        const app::LessonResult* r = c.result();
        QVERIFY(r != nullptr);
        QCOMPARE(r->outcome, app::Outcome::True);

        // Both runs are in the session, each with exactly the events the lesson measured.
        QVERIFY(QFile::exists(c.sessionPath()));
        storage::SessionReader reader(c.sessionPath().toStdString());
        const auto runs = reader.runs();
        QCOMPARE(runs.size(), std::size_t{2});
        for (std::size_t i = 0; i < 2; ++i) {
            QCOMPARE(runs[i].number, c.sessionRuns()[i]);
            QCOMPARE(runs[i].eventCount, r->runs[i].anchors.events);
            QCOMPARE(runs[i].summary->peakReserved, static_cast<std::int64_t>(r->runs[i].metrics.peakReserved));
        }

        // Step 1: default run, at the peak, timeline.
        c.showStep(0);
        QCOMPARE(nav.openedPath, c.sessionPath());
        QCOMPARE(nav.run, c.sessionRuns()[0]);
        QCOMPARE(nav.event, static_cast<qint64>(*r->steps[0].event));
        QCOMPARE(nav.view, QString("timeline"));
        // Step 3: the expandable run.
        c.showStep(2);
        QCOMPARE(nav.run, c.sessionRuns()[1]);
        QCOMPARE(nav.view, QString("segments"));
        // Step 4: the comparison of both runs.
        c.showStep(3);
        QCOMPARE(nav.compared, QList<int>({c.sessionRuns()[0], c.sessionRuns()[1]}));
        // The session was opened once.
        QCOMPARE(nav.calls.filter("open ").size(), 1);
    }

    void workloadLessonSelectsTheStepsBlock() {
        FakeNavigator nav;
        app::LessonController c(&nav);
        QVERIFY(c.loadLessons(QString::fromStdString(lessontest::lessonsDir())));
        runToEnd(c, "fragmentation-oom");
        // Step 3 is at the OOM of the default run.
        c.showStep(2);
        const app::LessonRunResult& a = c.result()->runs[0];
        QCOMPARE(nav.event, static_cast<qint64>(a.anchors.firstOomEvent));
        storage::SessionReader reader(c.sessionPath().toStdString());
        QCOMPARE(reader.runs()[0].eventCount, a.anchors.events);
    }

    void cancelEndsWithoutAResult() {
        FakeNavigator nav;
        app::LessonController c(&nav);
        QVERIFY(c.loadLessons(QString::fromStdString(lessontest::lessonsDir())));
        QSignalSpy cancelled(&c, &app::LessonController::cancelled);
        c.start(c.indexOf("training-levers"));
        c.cancel();
        QTRY_VERIFY_WITH_TIMEOUT(!cancelled.isEmpty(), 120000);
        QVERIFY(c.result() == nullptr);
        QVERIFY(nav.calls.isEmpty());
    }

    void badLessonFolderSaysWhy() {
        app::LessonController c(nullptr);
        QVERIFY(!c.loadLessons("/nonexistent/lessons"));
        QCOMPARE(c.lastError(), QString("no lesson folder there (/nonexistent/lessons)"));
    }
};

QTEST_GUILESS_MAIN(TestLessonController)
#include "TestLessonController.moc"
