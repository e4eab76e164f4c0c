// A guided lesson played end to end in the real main window: Help ▸ Lessons shows the lesson dock,
// Run measures the lesson in the background, and each step opens the lesson's session in the
// window, selects the step's run, moves the scrubber and brings the step's view to the front.
#include <QtTest>
#include <QListWidget>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableWidget>

#include "app/gui/LessonController.h"
#include "app/gui/LessonDock.h"
#include "app/gui/MainWindow.h"
#include "views/widgets/RunListModel.h"
#include "views/widgets/RunListWidget.h"
#include "views/widgets/EventScrubber.h"
#include "views/widgets/LessonPanel.h"
#include "views/widgets/SegmentMapWidget.h"
#include "views/widgets/WelcomeHint.h"

using allocscope::app::MainWindow;
namespace views = allocscope::views;

class TestMainWindowLessons : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { qRegisterMetaType<views::LessonData>(); }

    // An empty window greets a newcomer with how to open a file and a link to the lessons: the
    // link opens the Lessons dock (F1's), not a browser.
    void theWelcomeLinkOpensTheLessons() {
        MainWindow window;
        window.resize(1280, 720);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        auto* hint = window.findChild<views::WelcomeHint*>();
        QVERIFY(hint && hint->isVisible());
        QVERIFY(hint->text().contains(QStringLiteral("File ▸ Open…")));
        QVERIFY(!hint->openExternalLinks());
        QVERIFY(!window.lessonDock()->isVisible());
        emit hint->linkActivated(QStringLiteral("lessons"));
        QTRY_VERIFY(window.lessonDock()->isVisible());
    }

    // F1 on a 1280 x 720 screen: the lesson dock joins the right dock area, and the window must
    // still fit the screen (before, the dock's minimum width pushed the window to ~1400 px, so
    // the Find field and the lesson's text ran off the right edge).
    void lessonDockFitsA1280WideWindow() {
        MainWindow window;
        window.resize(1280, 720);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        // With a snapshot open: the Program panel then describes the recording.
        QSignalSpy finished(&window, &MainWindow::jobFinished);
        QVERIFY(window.openFile(QStringLiteral(ALLOCSCOPE_TEST_DATA "/traces/train_gpt__default.pickle")));
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, 60000);
        QTRY_COMPARE_WITH_TIMEOUT(window.runList()->model()->rowCount(), 1, 60000);
        window.lessonsAction()->trigger();
        QVERIFY(window.lessonDock()->isVisible());
        QCoreApplication::processEvents();
        QVERIFY2(window.minimumSizeHint().width() <= 1280,
                 qPrintable(QString("the window needs %1 px").arg(window.minimumSizeHint().width())));
        QVERIFY2(window.width() <= 1280, qPrintable(QString("the window grew to %1 px").arg(window.width())));
        // The lesson gets most of its dock column (the Inspector and the summary keep a few rows):
        // at least half the window's height (297 of 720 px before).
        QTRY_VERIFY2(window.lessonDock()->height() >= window.height() / 2,
                     qPrintable(QString("the lesson dock is %1 of %2 px").arg(window.lessonDock()->height()).arg(window.height())));
        // In the narrow dock the list stands above the lesson, whose Run button is inside the window.
        views::LessonPanel* panel = window.lessonDock()->panel();
        QCOMPARE(panel->layoutOrientation(), Qt::Vertical);
        QVERIFY2(panel->runButton()->isVisible() && panel->runButton()->width() > 0, "Run lesson is not shown");
        QVERIFY2(panel->runButton()->mapTo(&window, QPoint(panel->runButton()->width(), 0)).x() <= window.width(),
                 "Run lesson ends outside the window");
    }

    void helpLessonsPlaysALessonInTheWindow() {
        MainWindow window;
        window.resize(1280, 720);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));

        allocscope::app::LessonDock* dock = window.lessonDock();
        QVERIFY(dock != nullptr);
        QVERIFY(!dock->isVisible());
        QCOMPARE(dock->loadError(), QString());
        window.lessonsAction()->trigger();
        QVERIFY(dock->isVisible());
        views::LessonPanel* panel = dock->panel();
        QCOMPARE(panel->list()->count(), 13);
        QCOMPARE(panel->list()->currentRow(), 0);  // ready to run at once

        allocscope::app::LessonController* controller = dock->controller();
        panel->list()->setCurrentRow(controller->indexOf("empty-cache"));
        QSignalSpy finished(controller, &allocscope::app::LessonController::finished);
        QTest::mouseClick(panel->runButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 120000);
        QCOMPARE(panel->verdictHeadline(), QString("FALSE"));
        QCOMPARE(panel->numbersTable()->item(0, 0)->text(), QString("1194.0 MiB"));

        // Step 1: the lesson's own session is open in the window, its first run selected, the
        // segment map in front; the user's work is not touched (the session is a temporary file).
        QCOMPARE(panel->currentStep(), 0);
        QTRY_COMPARE_WITH_TIMEOUT(window.currentFile(), controller->sessionPath(), 30000);
        const std::vector<int>& runs = controller->sessionRuns();
        QVERIFY(runs.size() >= 2);
        QTRY_COMPARE_WITH_TIMEOUT(window.currentRun(), runs[0], 30000);
        QCOMPARE(window.viewTabs()->currentWidget(), static_cast<QWidget*>(window.segmentMap()));
        QTRY_VERIFY_WITH_TIMEOUT(window.scrubber()->eventCount() > 0, 30000);
        QTRY_VERIFY_WITH_TIMEOUT(!window.segmentMap()->data().segments.empty(), 30000);
        // "at the end": the scrubber stands on the run's last event.
        QTRY_COMPARE_WITH_TIMEOUT(window.scrubber()->currentEvent(), window.scrubber()->eventCount() - 1, 30000);

        // Step 2: the other config's run.
        QTest::mouseClick(panel->nextButton(), Qt::LeftButton);
        QCOMPARE(panel->currentStep(), 1);
        QTRY_VERIFY_WITH_TIMEOUT(window.currentRun() != runs[0], 30000);

        // Step 3: the timeline.
        QTest::mouseClick(panel->nextButton(), Qt::LeftButton);
        QTRY_COMPARE_WITH_TIMEOUT(window.viewTabs()->tabText(window.viewTabs()->currentIndex()), QString("&Timeline"), 30000);

        // Back again: the segment map returns.
        QTest::mouseClick(panel->backButton(), Qt::LeftButton);
        QTRY_COMPARE_WITH_TIMEOUT(window.viewTabs()->currentWidget(), static_cast<QWidget*>(window.segmentMap()), 30000);
    }
};

QTEST_MAIN(TestMainWindowLessons)
#include "TestMainWindowLessons.moc"
