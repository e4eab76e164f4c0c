// The Allocations tab in the real window (issue 16), on an imported real trace (train_gpt: 8,131
// events, PyTorch's own peak of 4,572,544,000 allocated bytes): Ctrl+5 shows it, it holds the run's
// largest allocations with their call sites, its stack reaches PyTorch's peak, and clicking a band
// selects that block in the segment map and the inspector and moves the scrubber into its lifetime.
#include <QtTest>
#include <QLabel>

#include <QSettings>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QLineEdit>

#include "app/gui/MainWindow.h"
#include "app/gui/SearchController.h"
#include "storage/session/LiveBlocks.h"
#include "storage/session/SessionReader.h"
#include "views/widgets/HeatmapPlot.h"
#include "views/widgets/HeatmapWidget.h"
#include "views/widgets/SegmentMapCanvas.h"
#include "storage/session/ProgramRecording.h"
#include "storage/session/SessionWriter.h"
#include "views/widgets/AllocationsPlot.h"
#include "views/widgets/AllocationsWidget.h"
#include "views/widgets/BlockInspectorWidget.h"
#include "views/widgets/EventScrubber.h"
#include "views/widgets/RunListModel.h"
#include "views/widgets/RunListWidget.h"
#include "views/widgets/SegmentMapWidget.h"

using allocscope::app::MainWindow;
namespace storage = allocscope::storage;
namespace views = allocscope::views;

namespace {
constexpr int kTimeout = 60000;
constexpr qint64 kPyTorchPeak = 4'572'544'000;  // train_gpt__default.json: allocated_bytes.all.peak
}  // namespace

class TestMainWindowAllocations : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    QString session_;

private slots:
    void initTestCase() {
        QSettings().clear();
        QVERIFY(dir_.isValid());
        session_ = dir_.filePath("gpt.allocscope");
        storage::SessionWriter writer(session_.toStdString());
        storage::ImportTarget target;
        target.totalMemory = 85'017'493'504ull;
        storage::importTraceFile(writer, qEnvironmentVariable("ALLOCSCOPE_TEST_DATA").toStdString() + "/traces/train_gpt__default.pickle", target);
        writer.flush();
    }

    void tabShowsTheRunsAllocations() {
        MainWindow window;
        window.resize(1280, 720);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(window.openSessionFile(session_));
        QTRY_VERIFY_WITH_TIMEOUT(window.currentFrame().run == 1 && !window.currentFrame().approximate, kTimeout);
        QTest::keyClick(&window, Qt::Key_5, Qt::ControlModifier);
        QCOMPARE(window.viewTabs()->currentWidget(), window.allocations());
        views::AllocationsPlot* plot = window.allocations()->plot();
        QTRY_VERIFY_WITH_TIMEOUT(plot->data().eventCount == 8131, kTimeout);
        QVERIFY(plot->data().bands.size() > 1000);  // every allocation of the run (fewer than the 10,000 kept)
        QVERIFY(plot->data().anyStack);
        QVERIFY(plot->data().bands.front().size >= plot->data().bands.back().size);
        // Its header sentence wraps: no label of the tab asks for the width of its whole sentence
        // (on one line it pushed the window past a 1280 px screen with both docks open).
        for (const QLabel* label : window.allocations()->findChildren<QLabel*>()) {
            QVERIFY2(label->minimumSizeHint().width() < 300,
                     qPrintable(label->text() + " needs " + QString::number(label->minimumSizeHint().width()) + " px"));
        }
        QVERIFY(window.width() <= 1280);
        // The envelope's top is PyTorch's own peak of allocated bytes.
        QCOMPARE(*std::max_element(plot->data().allocatedMax.begin(), plot->data().allocatedMax.end()), kPyTorchPeak);
        QCOMPARE(plot->currentEvent(), window.scrubber()->currentEvent());

        // Click the largest band, wherever it lives: the block is selected at an event of its life.
        const views::AllocationBandView& largest = plot->data().bands.front();
        const QRect r = plot->plotRect();
        const double middle = (static_cast<double>(largest.allocEvent) + static_cast<double>(largest.freeEvent)) / 2;
        QPoint hitPoint;
        for (int y = r.bottom(); y > r.top(); y -= 2) {  // find the band in its column
            const QPoint p(static_cast<int>(plot->xForEvent(middle)), y);
            const views::AllocationsPlot::Hit hit = plot->hitAt(p);
            if (hit.kind == views::AllocationsPlot::Hit::Kind::Band && hit.band == 0) {
                hitPoint = p;
                break;
            }
        }
        QVERIFY(!hitPoint.isNull());
        QTest::mouseClick(plot, Qt::LeftButton, {}, hitPoint);
        const qint64 event = window.scrubber()->currentEvent();
        QVERIFY(event >= largest.allocEvent && event < largest.freeEvent);
        QTRY_COMPARE_WITH_TIMEOUT(window.inspector()->data().address, largest.address, kTimeout);
        QTRY_VERIFY_WITH_TIMEOUT(window.segmentMap()->selectedBlock() == std::optional<quint64>(largest.address), kTimeout);
    }

    void searchHighlightsMatchesInEveryView() {
        MainWindow window;
        window.resize(1280, 720);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(window.openSessionFile(session_));
        QTRY_VERIFY_WITH_TIMEOUT(window.currentFrame().run == 1 && !window.currentFrame().approximate, kTimeout);
        views::AllocationsPlot* plot = window.allocations()->plot();
        QTRY_VERIFY_WITH_TIMEOUT(plot->data().eventCount == 8131, kTimeout);
        const qint64 event = window.currentFrame().shown;

        // What the session itself says: the blocks live at this event whose stack has the frame.
        storage::SessionReader reader(session_.toStdString());
        int expectedLive = 0;
        for (const storage::LiveBlock& b : storage::LiveBlocks::at(reader, 1, static_cast<std::uint64_t>(event))) {
            for (const auto& f : reader.stack(1, b.stackId)) {
                if (f.filename == "tracegen.py" && f.line == 100) {
                    ++expectedLive;
                    break;
                }
            }
        }
        QVERIFY(expectedLive > 0);

        QTest::keyClick(&window, Qt::Key_F, Qt::ControlModifier);
        QTRY_VERIFY(window.search()->field()->hasFocus());
        QTest::keyClicks(window.search()->field(), "TRACEGEN.py:100");  // case does not matter
        QTest::keyClick(window.search()->field(), Qt::Key_Return);
        QVERIFY(!window.search()->highlight().stackIds.isEmpty());
        QCOMPARE(window.segmentMap()->canvas()->matchCount(), expectedLive);
        int bands = 0;
        for (int i = 0; i < static_cast<int>(plot->data().bands.size()); ++i) bands += plot->bandMatches(i) ? 1 : 0;
        QVERIFY(bands >= expectedLive);
        QCOMPARE(static_cast<int>(window.heatmap()->plot()->highlights().size()), bands);

        // An address: the one block containing it.
        const storage::LiveBlock some = storage::LiveBlocks::at(reader, 1, static_cast<std::uint64_t>(event)).front();
        window.search()->field()->setText(QString("0x%1").arg(some.address + 16, 0, 16));
        QTest::keyClick(window.search()->field(), Qt::Key_Return);
        QCOMPARE(window.segmentMap()->canvas()->matchCount(), 1);

        // Escape clears every view.
        QTest::keyClick(window.search()->field(), Qt::Key_Escape);
        QVERIFY(!window.search()->highlight().active());
        QCOMPARE(window.segmentMap()->canvas()->matchCount(), 0);
        QVERIFY(window.heatmap()->plot()->highlights().empty());
    }
};

QTEST_MAIN(TestMainWindowAllocations)
#include "TestMainWindowAllocations.moc"
