// The Allocations view (issue 16): bands stacked in allocation order that move down when one
// below is freed, colours per call site, the "smaller allocations" band, Detail, hit testing,
// tooltips, zoom, pan and clicks. Checked on the pixels of a known data set.
#include <QtTest>
#include <QComboBox>
#include <QLabel>
#include <QSignalSpy>

#include "views/data/AllocationsData.h"
#include "views/widgets/AllocationsPlot.h"
#include "views/widgets/AllocationsWidget.h"

using namespace allocscope::views;

namespace {

constexpr qint64 kMiB = 1 << 20;

// Events 0..99. Band A (40 MiB, site 0) lives 0-50, band B (20 MiB, site 1) 10-90, band C
// (10 MiB, no stack) 20-100 (live at the end). 5 MiB of smaller allocations underneath all along.
AllocationsData sample() {
    AllocationsData d;
    d.eventCount = 100;
    d.sites = {AllocationSite{"forward (model.py:10)", {"forward (model.py:10)", "<module> (train.py:3)"}, 40 * kMiB},
               AllocationSite{"backward (model.py:20)", {"backward (model.py:20)"}, 20 * kMiB}};
    d.anyStack = true;
    AllocationBandView a{0, 50, false, 0x1000, 40 * kMiB, 40 * kMiB - 3, 0, 0, 11, "default pool", "forward"};
    AllocationBandView b{10, 90, false, 0x9000000, 20 * kMiB, 20 * kMiB, 7, 1, 12, "graph pool (1,0)", ""};
    AllocationBandView c{20, 100, true, 0xa000000, 10 * kMiB, 10 * kMiB, 0, -1, 0, "default pool", ""};
    d.bands = {a, b, c};  // largest first
    d.bucketEvents = 1;
    for (qint64 e = 0; e < 100; ++e) {
        qint64 live = 5 * kMiB;
        if (e < 50) live += 40 * kMiB;
        if (e >= 10 && e < 90) live += 20 * kMiB;
        if (e >= 20) live += 10 * kMiB;
        d.allocatedMax.push_back(live);
    }
    return d;
}

QPoint at(const AllocationsPlot& plot, double event, qint64 bytes) {
    const QRect r = plot.plotRect();
    const double x = plot.xForEvent(event);
    const double y = r.bottom() + 1 - (static_cast<double>(bytes) - plot.bytesLow()) / (plot.bytesHigh() - plot.bytesLow()) * r.height();
    return QPoint(static_cast<int>(x), static_cast<int>(y));
}

QColor pixel(AllocationsPlot& plot, QPoint p) { return plot.grab().toImage().pixelColor(p); }

}  // namespace

class TestAllocationsWidget : public QObject {
    Q_OBJECT

private slots:
    void init() { QSettings().clear(); }

    void bandsStackInAllocationOrderAndMoveDown() {
        AllocationsPlot plot;
        plot.resize(800, 400);
        plot.setDetail(10);
        plot.setData(sample());
        QCOMPARE(plot.drawnCount(), 3);
        // At event 30: smaller (5) | A (40) | B (20) | C (10), bottom to top.
        QCOMPARE(pixel(plot, at(plot, 30.5, 2 * kMiB)), plot.siteColor(-1));
        QCOMPARE(pixel(plot, at(plot, 30.5, 25 * kMiB)), plot.siteColor(0));
        QCOMPARE(pixel(plot, at(plot, 30.5, 55 * kMiB)), plot.siteColor(1));
        QCOMPARE(pixel(plot, at(plot, 30.5, 70 * kMiB)), plot.siteColor(-1));  // C has no stack
        // At event 70 A is freed: B moved down onto the smaller band.
        QCOMPARE(pixel(plot, at(plot, 70.5, 15 * kMiB)), plot.siteColor(1));
        // Distinct sites, distinct colours.
        QVERIFY(plot.siteColor(0) != plot.siteColor(1));
        QVERIFY(plot.siteColor(0) != plot.siteColor(-1));
    }

    void detailMergesTheRestIntoTheSmallerBand() {
        AllocationsPlot plot;
        plot.resize(800, 400);
        plot.setDetail(1);
        plot.setData(sample());
        QCOMPARE(plot.drawnCount(), 1);
        // Only A is drawn; B's 20 MiB now belongs to the smaller band beneath A.
        QCOMPARE(pixel(plot, at(plot, 30.5, 30 * kMiB)), plot.siteColor(-1));
        QCOMPARE(pixel(plot, at(plot, 30.5, 60 * kMiB)), plot.siteColor(0));
        const AllocationsPlot::Hit hit = plot.hitAt(at(plot, 30.5, 30 * kMiB));
        QCOMPARE(hit.kind, AllocationsPlot::Hit::Kind::Smaller);
        QCOMPARE(hit.smallerBytes, 35 * kMiB);
    }

    void hoverDescribesTheAllocation() {
        AllocationsPlot plot;
        plot.resize(800, 400);
        plot.setData(sample());
        AllocationsPlot::Hit hit = plot.hitAt(at(plot, 30.5, 55 * kMiB));
        QCOMPARE(hit.kind, AllocationsPlot::Hit::Kind::Band);
        QCOMPARE(hit.band, 1);
        QString text = plot.describe(hit);
        QVERIFY2(text.contains("20.0 MiB") && text.contains("stream 7") && text.contains("graph pool (1,0)"), qPrintable(text));
        QVERIFY(text.contains("allocated at event 10") && text.contains("freed at event 90"));
        QVERIFY(text.contains("backward (model.py:20)"));
        hit = plot.hitAt(at(plot, 30.5, 70 * kMiB));
        text = plot.describe(hit);
        QVERIFY(text.contains("no stack recorded") && text.contains("still live at the end"));
        QVERIFY(plot.describe(plot.hitAt(at(plot, 30.5, 2 * kMiB))).contains("Smaller allocations"));
    }

    void clickSelectsTheBlockWithinItsLifetime() {
        AllocationsPlot plot;
        plot.resize(800, 400);
        plot.setData(sample());
        plot.show();
        QVERIFY(QTest::qWaitForWindowExposed(&plot));
        QSignalSpy blocks(&plot, &AllocationsPlot::blockRequested);
        QSignalSpy events(&plot, &AllocationsPlot::eventRequested);
        QTest::mouseClick(&plot, Qt::LeftButton, {}, at(plot, 30.5, 25 * kMiB));
        QCOMPARE(blocks.count(), 1);
        QCOMPARE(blocks.at(0).at(0).toULongLong(), quint64(0x1000));
        const qint64 event = blocks.at(0).at(1).toLongLong();
        QVERIFY(event >= 0 && event < 50);
        // Above the stack: the scrubber moves there.
        QTest::mouseClick(&plot, Qt::LeftButton, {}, at(plot, 95.5, 60 * kMiB));
        QCOMPARE(events.count(), 1);
        QVERIFY(std::abs(events.at(0).at(0).toLongLong() - 95) <= 1);
    }

    void zoomAndPan() {
        AllocationsPlot plot;
        plot.resize(800, 400);
        plot.setData(sample());
        plot.show();
        QVERIFY(QTest::qWaitForWindowExposed(&plot));
        plot.zoomTime(0.5, 50);
        QCOMPARE(plot.windowFirst(), 25.0);
        QCOMPARE(plot.windowLast(), 75.0);
        // Drag right by a quarter of the plot: the window moves a quarter of its span earlier.
        const QRect r = plot.plotRect();
        const QPoint from(r.center());
        QTest::mousePress(&plot, Qt::LeftButton, {}, from);
        QMouseEvent move(QEvent::MouseMove, QPointF(from + QPoint(r.width() / 4, 0)), plot.mapToGlobal(QPointF(from + QPoint(r.width() / 4, 0))),
                         Qt::NoButton, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(&plot, &move);
        QTest::mouseRelease(&plot, Qt::LeftButton, {}, from + QPoint(r.width() / 4, 0));
        QVERIFY(std::abs(plot.windowFirst() - 12.5) < 0.6);
        // Ctrl+wheel zooms bytes; Home shows everything again.
        const double high = plot.bytesHigh();
        plot.zoomBytes(0.5, 0);
        QVERIFY(plot.bytesHigh() < high);
        QTest::keyClick(&plot, Qt::Key_Home);
        QCOMPARE(plot.windowFirst(), 0.0);
        QCOMPARE(plot.windowLast(), 100.0);
        QCOMPARE(plot.bytesHigh(), high);
        // The window never leaves the run and never gets narrower than a few events.
        plot.setWindow(-50, 10);
        QCOMPARE(plot.windowFirst(), 0.0);
        plot.zoomTime(1e-6, 40);
        QVERIFY(plot.windowLast() - plot.windowFirst() >= 7.9);
    }

    void shiftDragZoomsToTheRange() {
        AllocationsPlot plot;
        plot.resize(800, 400);
        plot.setData(sample());
        plot.show();
        QVERIFY(QTest::qWaitForWindowExposed(&plot));
        const QPoint a = at(plot, 20, 10 * kMiB), b = at(plot, 60, 10 * kMiB);
        QTest::mousePress(&plot, Qt::LeftButton, Qt::ShiftModifier, a);
        QMouseEvent move(QEvent::MouseMove, QPointF(b), plot.mapToGlobal(QPointF(b)), Qt::NoButton, Qt::LeftButton, Qt::ShiftModifier);
        QApplication::sendEvent(&plot, &move);
        QTest::mouseRelease(&plot, Qt::LeftButton, Qt::ShiftModifier, b);
        QVERIFY(std::abs(plot.windowFirst() - 20) < 0.6);
        QVERIFY(std::abs(plot.windowLast() - 60) < 0.6);
    }

    void widgetRemembersDetail() {
        {
            AllocationsWidget widget;
            widget.setData(sample());
            widget.detailBox()->setCurrentIndex(widget.detailBox()->findData(50));
            QCOMPARE(widget.plot()->detail(), 50);
            QVERIFY(widget.infoLabel()->text().contains("3 largest allocations drawn"));
        }
        AllocationsWidget again;
        QCOMPARE(again.plot()->detail(), 50);
    }

    void cursorIsDrawn() {
        AllocationsPlot plot;
        plot.resize(800, 400);
        plot.setData(sample());
        const QPoint p = at(plot, 95.5, 60 * kMiB);  // above the stack: background
        const QColor before = pixel(plot, p);
        plot.setCurrentEvent(95);
        QVERIFY(pixel(plot, p) != before);
    }
};

QTEST_MAIN(TestAllocationsWidget)
#include "TestAllocationsWidget.moc"
