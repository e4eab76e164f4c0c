// The lesson panel plays a lesson end to end with the real controller: pick it, run it, read the
// verdict and the numbers, walk the steps with Next/Back (the fake window follows).
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>
#include <QtTest>

#include "FakeNavigator.h"
#include "LessonTestSupport.h"
#include "app/gui/LessonController.h"
#include "views/widgets/LessonPanel.h"

using namespace allocscope;

class TestLessonPanel : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { qRegisterMetaType<views::LessonData>(); }

    void playsALessonEndToEnd() {
        FakeNavigator nav;
        app::LessonController controller(&nav);
        QVERIFY(controller.loadLessons(QString::fromStdString(lessontest::lessonsDir())));
        views::LessonPanel panel;
        controller.attach(&panel);
        panel.resize(900, 700);
        panel.show();
        QCOMPARE(panel.list()->count(), 13);
        QVERIFY(!panel.runButton()->isEnabled());

        panel.list()->setCurrentRow(controller.indexOf("empty-cache"));
        QVERIFY(panel.runButton()->isEnabled());
        QCOMPARE(panel.lesson().title, QString("torch.cuda.empty_cache(): useless, or a free lunch?"));
        QVERIFY(panel.verdictHeadline().isEmpty());

        QSignalSpy finished(&controller, &app::LessonController::finished);
        QTest::mouseClick(panel.runButton(), Qt::LeftButton);
        QVERIFY(!panel.runButton()->isEnabled());
        QVERIFY(panel.cancelButton()->isEnabled());
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 120000);

        // The verdict and its numbers, as measured.
        QCOMPARE(panel.verdictHeadline(), QString("FALSE"));
        QTableWidget* table = panel.numbersTable();
        QCOMPARE(table->columnCount(), 2);
        QCOMPARE(table->horizontalHeaderItem(0)->text(), QString("no empty_cache()"));
        QCOMPARE(table->verticalHeaderItem(0)->text(), QString("peak reserved"));
        QCOMPARE(table->item(0, 0)->text(), QString("1194.0 MiB"));
        QVERIFY(panel.runButton()->isEnabled());
        QVERIFY(!panel.cancelButton()->isEnabled());

        // Step 1 is shown and has moved the window.
        QCOMPARE(panel.currentStep(), 0);
        QVERIFY(panel.stepText().startsWith("Without empty_cache()"));
        QCOMPARE(nav.view, QString("segments"));
        QVERIFY(!panel.backButton()->isEnabled());
        const int firstRun = nav.run;

        // For the README: ALLOCSCOPE_SCREENSHOT_DIR=DIR saves the panel as it looks now.
        if (qEnvironmentVariableIsSet("ALLOCSCOPE_SCREENSHOT_DIR")) {
            QVERIFY(panel.grab().save(qEnvironmentVariable("ALLOCSCOPE_SCREENSHOT_DIR") + "/lesson-panel.png"));
        }

        QTest::mouseClick(panel.nextButton(), Qt::LeftButton);
        QCOMPARE(panel.currentStep(), 1);
        QVERIFY(panel.stepText().startsWith("With empty_cache()"));
        QVERIFY(nav.run != firstRun);
        QTest::mouseClick(panel.nextButton(), Qt::LeftButton);
        QCOMPARE(nav.view, QString("timeline"));
        QVERIFY(!panel.nextButton()->isEnabled());  // last step
        QTest::mouseClick(panel.backButton(), Qt::LeftButton);
        QCOMPARE(panel.currentStep(), 1);
        QCOMPARE(nav.view, QString("segments"));
    }

    // Narrow (a side dock): the list above the lesson, and no minimum width that would widen the
    // window; wide (a floating dock): side by side.
    void listGoesAboveTheLessonWhenNarrow() {
        views::LessonPanel panel;
        QVERIFY2(panel.minimumSizeHint().width() <= 300, qPrintable(QString::number(panel.minimumSizeHint().width())));
        panel.resize(320, 600);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QCOMPARE(panel.layoutOrientation(), Qt::Vertical);
        panel.resize(900, 600);
        QTRY_COMPARE(panel.layoutOrientation(), Qt::Horizontal);
        panel.resize(400, 600);
        QTRY_COMPARE(panel.layoutOrientation(), Qt::Vertical);
    }

    void everyControlHasATooltipAndTakesFocus() {
        views::LessonPanel panel;
        for (QWidget* w : std::initializer_list<QWidget*>{panel.list(), panel.runButton(), panel.cancelButton(), panel.backButton(),
                                                          panel.nextButton(), panel.numbersTable(), panel.progressBar()}) {
            QVERIFY2(!w->toolTip().isEmpty(), qPrintable(w->objectName()));
        }
        for (QPushButton* b : {panel.runButton(), panel.cancelButton(), panel.backButton(), panel.nextButton()}) {
            QVERIFY(b->focusPolicy() & Qt::TabFocus);
            QVERIFY2(b->text().contains('&'), qPrintable(b->text()));  // a mnemonic
        }
    }

    void errorsAreShown() {
        app::LessonController controller(nullptr);
        QVERIFY(!controller.loadLessons("/nonexistent/lessons"));
        views::LessonPanel panel;
        controller.attach(&panel);
        QCOMPARE(panel.list()->count(), 0);
        QCOMPARE(panel.statusText(), QString("no lesson folder there (/nonexistent/lessons)"));
    }
};

QTEST_MAIN(TestLessonPanel)
#include "TestLessonPanel.moc"
