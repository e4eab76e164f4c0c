// The widgets the main window adds to the views library: the event scrubber's keys, the run
// list's model and CSV, and the inspector's text and event links.
#include <QtTest>
#include <QSlider>
#include <QSpinBox>
#include <QTableView>
#include <QTextBrowser>

#include <optional>

#include "views/widgets/BlockInspectorWidget.h"
#include "views/widgets/EventScrubber.h"
#include "views/widgets/RunListModel.h"
#include "views/widgets/RunListWidget.h"

using namespace allocscope::views;

class TestAppWidgets : public QObject {
    Q_OBJECT
private slots:
    void scrubberKeys() {
        EventScrubber s;
        QSignalSpy changed(&s, &EventScrubber::eventChanged);
        QSignalSpy opSteps(&s, &EventScrubber::opStepRequested);
        s.setEventCount(1000);
        QCOMPARE(s.currentEvent(), qint64{999});  // a new run shows its end
        s.setPhaseStarts({100, 400, 700});
        QSlider* slider = s.slider();
        QTest::keyClick(slider, Qt::Key_Home);
        QCOMPARE(s.currentEvent(), qint64{0});
        QTest::keyClick(slider, Qt::Key_Right);
        QCOMPARE(s.currentEvent(), qint64{1});
        QTest::keyClick(slider, Qt::Key_Left);
        QTest::keyClick(slider, Qt::Key_Left);  // clamped at 0
        QCOMPARE(s.currentEvent(), qint64{0});
        QTest::keyClick(slider, Qt::Key_PageDown);
        QCOMPARE(s.currentEvent(), qint64{100});
        QTest::keyClick(slider, Qt::Key_PageDown);
        QCOMPARE(s.currentEvent(), qint64{400});
        QTest::keyClick(slider, Qt::Key_PageUp);
        QCOMPARE(s.currentEvent(), qint64{100});
        QTest::keyClick(slider, Qt::Key_End);
        QCOMPARE(s.currentEvent(), qint64{999});
        QTest::keyClick(slider, Qt::Key_PageDown);  // after the last phase: the end
        QCOMPARE(s.currentEvent(), qint64{999});
        QTest::keyClick(slider, Qt::Key_Right, Qt::ControlModifier);
        QCOMPARE(opSteps.size(), 1);
        QCOMPARE(opSteps.at(0).at(0).toInt(), 1);
        // Every move was announced as not dragging; the spin box follows.
        for (const auto& args : changed) QCOMPARE(args.at(1).toBool(), false);
        QCOMPARE(s.spinBox()->value(), 999);
        // Typing an event in the spin box moves there.
        s.spinBox()->setValue(250);
        QCOMPARE(s.currentEvent(), qint64{250});
        // Dragging is reported as such; the release follows.
        QSignalSpy released(&s, &EventScrubber::dragFinished);
        slider->setSliderDown(true);
        slider->setValue(300);
        QCOMPARE(changed.last().at(0).toLongLong(), qint64{300});
        QCOMPARE(changed.last().at(1).toBool(), true);
        slider->setSliderDown(false);
        QCOMPARE(released.size(), 1);
        // No events: disabled.
        s.setEventCount(0);
        QVERIFY(!s.isEnabled());
    }

    void runListSortsByNumbersAndExportsCsv() {
        RunListWidget w;
        RunListData runs(3);
        runs[0].number = 1;
        runs[0].name = "a";
        runs[0].status = "complete";
        runs[0].peakReserved = 2LL << 30;
        runs[0].ooms = 0;
        runs[1].number = 2;
        runs[1].name = "b, with comma";
        runs[1].status = "complete";
        runs[1].config = "expandable_segments:True";
        runs[1].peakReserved = 900LL << 20;
        runs[1].ooms = 1;
        runs[2].number = 3;
        runs[2].name = "c";
        runs[2].status = "interrupted";
        w.setRuns(runs);
        QCOMPARE(w.model()->index(2, RunListModel::PeakReservedColumn).data().toString(), QString("—"));
        QCOMPARE(w.model()->index(0, RunListModel::PeakReservedColumn).data().toString(), QString("2.00 GiB"));
        QCOMPARE(w.model()->index(2, RunListModel::NameColumn).data().toString(), QString("c (interrupted)"));
        // Sorting by peak reserved uses bytes, not text.
        w.view()->sortByColumn(RunListModel::PeakReservedColumn, Qt::DescendingOrder);
        QCOMPARE(w.view()->model()->index(0, 0).data().toInt(), 1);
        QSignalSpy selected(&w, &RunListWidget::runSelected);
        w.selectRun(2);
        QCOMPARE(selected.size(), 1);
        QCOMPARE(w.selectedRun(), 2);
        w.setRuns(runs);  // a refresh keeps the selection without announcing it again
        QCOMPARE(w.selectedRun(), 2);
        QCOMPARE(selected.size(), 1);
        const QStringList lines = w.model()->toCsv().split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 4);
        QVERIFY(lines[0].startsWith("run,name,config,peak_reserved_bytes,ooms"));
        QCOMPARE(lines[2], QString("2,\"b, with comma\",expandable_segments:True,943718400,1,0,,,complete,unknown"));
    }

    // A long run name does not push the Verdict column out of the dock: the name column stops at
    // a width of its own, and the whole name stays in the row's tooltip.
    void longNamesLeaveRoomForTheVerdict() {
        RunListWidget w;
        RunListData runs(1);
        runs[0].number = 1;
        runs[0].name = "fragmentation-101 · expandable_segments:True,max_split_size_mb:128";
        runs[0].status = "complete";
        w.resize(360, 200);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.setRuns(runs);
        const int cap = w.view()->fontMetrics().horizontalAdvance(QLatin1Char('x')) * RunListWidget::kNameColumnChars;
        QCOMPARE(w.view()->columnWidth(RunListModel::NameColumn), cap);
        const int verdictEnd = w.view()->columnViewportPosition(RunListModel::VerdictColumn) +
                               w.view()->columnWidth(RunListModel::VerdictColumn);
        QVERIFY2(verdictEnd <= w.view()->viewport()->width(),
                 qPrintable(QString("the Verdict column ends at %1 of %2 px").arg(verdictEnd).arg(w.view()->viewport()->width())));
        QVERIFY(w.model()->index(0, RunListModel::NameColumn).data(Qt::ToolTipRole).toString().contains(runs[0].name));
        QCOMPARE(w.view()->textElideMode(), Qt::ElideMiddle);
    }

    void inspectorShowsEventsAndLinksToThem() {
        BlockInspectorWidget w;
        QVERIFY(w.plainText().contains("No block selected"));
        BlockInspectorData data;
        data.valid = true;
        data.address = 0x7f0000200000;
        data.size = 20 << 20;
        data.requested = 10 << 20;
        data.state = "active_pending_free";
        data.events.push_back({"alloc", 4, 2, "requested by the program"});
        data.events.push_back({"free_completed", 90, 40, "released by garbage collection"});
        data.stack.push_back({"forward", "model.py", 12});
        data.stack.push_back({"init_gpu_context", "fake_tensor.py", std::nullopt});  // a compiled program's frame
        w.setData(data);
        const QString text = w.plainText();
        QVERIFY(text.contains("0x7f0000200000"));
        QVERIFY(text.contains("active_pending_free"));
        QVERIFY(text.contains("10.0 MiB rounding"));
        QVERIFY(text.contains("released by garbage collection"));
        QVERIFY(text.contains("model.py:12"));
        QVERIFY(text.contains("fake_tensor.py:?"));
        QSignalSpy requested(&w, &BlockInspectorWidget::eventRequested);
        emit w.browser()->anchorClicked(QUrl("event:90"));
        QCOMPARE(requested.size(), 1);
        QCOMPARE(requested.at(0).at(0).toLongLong(), qint64{90});
    }
};

QTEST_MAIN(TestAppWidgets)
#include "TestAppWidgets.moc"
