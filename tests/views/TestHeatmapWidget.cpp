#include <QApplication>
#include <QMouseEvent>
#include <QSignalSpy>
#include <QtTest>

#include "ViewTestData.h"
#include "views/data/HeatmapRawAddresses.h"
#include "views/theme/ThemePalette.h"
#include <QCheckBox>
#include "views/widgets/HeatmapPlot.h"
#include "views/widgets/HeatmapWidget.h"
#include "views/widgets/LegendWidget.h"

using namespace allocscope::views;
Q_DECLARE_METATYPE(allocscope::views::ThemeChoice)

namespace {
constexpr quint64 kMiB = 1024ull * 1024ull;

// 10 time bins of 10 events, 4 address bins over two 2 MiB ranges with a gap between them.
HeatmapData knownGrid() {
    HeatmapData h;
    h.timeBins = 10;
    h.addressBins = 4;
    h.eventCount = 100;
    for (int t = 0; t < 10; ++t) h.columnFirstEvent.push_back(t * 10);
    h.ranges = {{0x7f0000000000ull, 2 * kMiB, 0}, {0x7f0040000000ull, 2 * kMiB, 0x40000000ull - 2 * kMiB}};
    h.cells.assign(40, HeatCell{});
    auto at = [&](int t, int a) -> HeatCell& { return h.cells[static_cast<std::size_t>(t * 4 + a)]; };
    at(2, 1) = viewtest::cellOf(0, 0, 255, 0, 0);      // all inactive
    at(5, 3) = viewtest::cellOf(255, 0, 0, 0, 0);      // all requested
    at(6, 2) = viewtest::cellOf(0, 0, 0, 255, 0);      // all pending free
    at(7, 0) = viewtest::cellOf(128, 127, 0, 0, 0);    // half requested, half waste
    at(8, 0) = viewtest::cellOf(0, 0, 0, 0, 255);      // unmapped
    return h;
}

bool near(const QColor& a, const QColor& b, int tolerance = 1) {
    return qAbs(a.red() - b.red()) <= tolerance && qAbs(a.green() - b.green()) <= tolerance && qAbs(a.blue() - b.blue()) <= tolerance;
}
}  // namespace

class TestHeatmapWidget : public QObject {
    Q_OBJECT
private slots:
    void cleanup() { applyTheme(*qApp, ThemeChoice::Light); }

    void cellsBlendStateColours_data() {
        QTest::addColumn<ThemeChoice>("theme");
        QTest::newRow("light") << ThemeChoice::Light;
        QTest::newRow("dark") << ThemeChoice::Dark;
    }
    void cellsBlendStateColours() {
        QFETCH(ThemeChoice, theme);
        applyTheme(*qApp, theme);
        const ThemePalette expected = theme == ThemeChoice::Dark ? ThemePalette::dark() : ThemePalette::light();
        HeatmapWidget w;
        w.resize(1280, 500);
        w.setData(knownGrid());
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        HeatmapPlot* p = w.plot();
        QCOMPARE(p->image().size(), QSize(10, 4));  // one pixel per cell
        const QImage img = p->grab().toImage();
        auto px = [&](int t, int a) { return img.pixelColor(p->cellRect(t, a).center().toPoint()); };
        QCOMPARE(px(2, 1), expected.inactive);
        QCOMPARE(px(5, 3), expected.requested);
        QCOMPARE(px(6, 2), expected.pendingFree);
        QCOMPARE(px(8, 0), expected.unmapped);
        QCOMPARE(px(0, 0), expected.unreserved);
        const QColor half((expected.requested.red() + expected.roundingWaste.red()) / 2,
                          (expected.requested.green() + expected.roundingWaste.green()) / 2,
                          (expected.requested.blue() + expected.roundingWaste.blue()) / 2);
        QVERIFY2(near(px(7, 0), half), qPrintable(px(7, 0).name() + QStringLiteral(" vs ") + half.name()));
        // Low addresses are at the bottom.
        QVERIFY(p->cellRect(5, 3).top() < p->cellRect(5, 0).top());

        // The squeezed gap between the two ranges is marked across the plot.
        const int gapY = qRound(p->cellRect(0, 2).bottom());
        bool sawGap = false;
        for (int x = p->plotRect().left() + 2; x < p->plotRect().right() - 2 && !sawGap; ++x)
            sawGap = img.pixelColor(x, gapY) == expected.gapMarker || img.pixelColor(x, gapY - 1) == expected.gapMarker;
        QVERIFY(sawGap);

        w.setCurrentEvent(45);
        const QImage withCursor = p->grab().toImage();
        const int x = qFloor(p->xForEvent(45));
        QVERIFY(p->cellRect(4, 0).left() <= x && x < p->cellRect(4, 0).right());
        QCOMPARE(withCursor.pixelColor(x, p->plotRect().center().y()), expected.cursor);
        QCOMPARE(withCursor.pixelColor(x, p->plotRect().top() + 3), expected.cursor);
        QCOMPARE(w.legend()->entries().at(2).color, expected.inactive);
    }

    void clickAndDragRequestEvents() {
        HeatmapWidget w;
        w.resize(900, 400);
        w.setData(knownGrid());
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        HeatmapPlot* p = w.plot();
        QSignalSpy spy(&w, &HeatmapWidget::eventRequested);
        // The left edge of column 7 is event 70; its middle is half way through 70..79.
        QTest::mouseClick(p, Qt::LeftButton, {}, QPoint(qCeil(p->cellRect(7, 2).left()), qRound(p->cellRect(7, 2).center().y())));
        QCOMPARE(spy.count(), 1);
        QCOMPARE(spy.at(0).at(0).toLongLong(), 70);
        QCOMPARE(w.currentEvent(), 70);
        QTest::mouseClick(p, Qt::LeftButton, {}, p->cellRect(3, 1).center().toPoint());
        QCOMPARE(spy.count(), 2);
        QVERIFY(spy.at(1).at(0).toLongLong() >= 34 && spy.at(1).at(0).toLongLong() <= 35);
        // Drag from column 1 to the far right: the last event.
        const QPoint start = p->cellRect(1, 0).center().toPoint();
        QTest::mousePress(p, Qt::LeftButton, {}, start);
        const QPoint end(p->plotRect().right() + 50, start.y());
        QMouseEvent move(QEvent::MouseMove, end, p->mapToGlobal(end), Qt::NoButton, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(p, &move);
        QTest::mouseRelease(p, Qt::LeftButton, {}, end);
        QCOMPARE(spy.last().at(0).toLongLong(), 99);
        // Clicks on the axes do nothing.
        const int before = static_cast<int>(spy.count());
        QTest::mouseClick(p, Qt::LeftButton, {}, QPoint(5, p->plotRect().center().y()));
        QCOMPARE(static_cast<int>(spy.count()), before);
        // setCurrentEvent (the app following the cursor elsewhere) emits nothing.
        w.setCurrentEvent(12);
        QCOMPARE(static_cast<int>(spy.count()), before);
    }

    void tooltipDescribesTheCell() {
        HeatmapWidget w;
        w.resize(900, 400);
        w.setData(knownGrid());
        const QString inactive = w.plot()->describeCell(2, 1);
        QVERIFY2(inactive.contains(QStringLiteral("inactive (cached free): 100.0 %")), qPrintable(inactive));
        QVERIFY(inactive.contains(QStringLiteral("events 20 – 29")));
        QVERIFY(inactive.contains(QStringLiteral("0x7f0000100000")));  // bin 1 starts 1 MiB in
        const QString mixed = w.plot()->describeCell(7, 0);
        QVERIFY(mixed.contains(QStringLiteral("requested: 50.2 %")));
        QVERIFY(mixed.contains(QStringLiteral("rounding waste: 49.8 %")));
        // Bin 2 is the first of the second range: its address is past the squeezed gap.
        QCOMPARE(w.plot()->addressAtAxisOffset(2 * kMiB), 0x7f0040000000ull);
    }

    void rawAddressModeHasNoGapMarks() {
        HeatmapData h = knownGrid();
        h.rawAddresses = true;
        h.ranges = {{0x7f0000000000ull, 0x40000000ull + 2 * kMiB, 0}};  // lowest to highest address, gap included
        HeatmapWidget w;
        w.resize(900, 400);
        w.setData(h);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        HeatmapPlot* p = w.plot();
        QCOMPARE(p->addressAtAxisOffset(0x40000000ull), 0x7f0040000000ull);
        const QImage img = p->grab().toImage();
        const ThemePalette colors = ThemePalette::forPalette(p->palette());
        for (int y = p->plotRect().top() + 1; y < p->plotRect().bottom(); ++y)
            QVERIFY(img.pixelColor(p->plotRect().center().x() + 7, y) != colors.gapMarker || colors.gapMarker == colors.unreserved);
        QVERIFY(p->describeCell(0, 3).contains(QStringLiteral("0x7f0030")));  // bin 3 starts 3/4 up the raw range
    }

    // Two 4 MiB ranges with a 4 MiB gap, 4 squeezed rows of 2 MiB; on raw addresses the 12 MiB
    // span makes 4 rows of 3 MiB: row 0 = squeezed rows 0 + half of 1, row 1 = the other half of
    // 1 + 2 MiB of gap, row 2 = 2 MiB of gap + half of row 2, row 3 = the other half + row 3.
    static HeatmapData twoRanges() {
        HeatmapData h;
        h.timeBins = 2;
        h.addressBins = 4;
        h.eventCount = 20;
        h.columnFirstEvent = {0, 10};
        h.ranges = {{0x10000000ull, 4 * kMiB, 0}, {0x10000000ull + 8 * kMiB, 4 * kMiB, 4 * kMiB}};
        h.cells.assign(8, HeatCell{});
        for (int a = 0; a < 4; ++a) h.cells[static_cast<std::size_t>(a)] = viewtest::cellOf(255, 0, 0, 0, 0);
        h.cells[4 + 1] = viewtest::cellOf(0, 0, 255, 0, 0);
        return h;
    }

    void rawAddressesRedistributeBytes() {
        const HeatmapData raw = toRawAddresses(twoRanges());
        QVERIFY(raw.isValid());
        QVERIFY(raw.rawAddresses);
        QCOMPARE(raw.ranges.size(), std::size_t(1));
        QCOMPARE(raw.ranges[0].start, 0x10000000ull);
        QCOMPARE(raw.ranges[0].size, 12 * kMiB);
        const auto requested = [&](int a) { return int(raw.cell(0, a)[static_cast<std::size_t>(HeatState::Requested)]); };
        QCOMPARE(requested(0), 255);
        QCOMPARE(requested(1), 85);  // one third of the row is memory, two thirds gap
        QCOMPARE(requested(2), 85);
        QCOMPARE(requested(3), 255);
        const auto inactive = [&](int a) { return int(raw.cell(1, a)[static_cast<std::size_t>(HeatState::Inactive)]); };
        QCOMPARE(inactive(0), 85);
        QCOMPARE(inactive(1), 85);
        QCOMPARE(inactive(2), 0);
        QCOMPARE(inactive(3), 0);
        // Already raw or invalid data comes back unchanged.
        QVERIFY(toRawAddresses(raw).cells == raw.cells);
        QVERIFY(!toRawAddresses(HeatmapData{}).isValid());
    }

    void rawAddressToggleRedrawsTheAxis() {
        HeatmapWidget w;
        w.resize(900, 400);
        w.setData(twoRanges());
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        const ThemePalette colors = ThemePalette::forPalette(w.plot()->palette());
        auto px = [&](int t, int a) { return w.plot()->grab().toImage().pixelColor(w.plot()->cellRect(t, a).center().toPoint()); };
        QCOMPARE(px(0, 1), colors.requested);
        QSignalSpy changed(&w, &HeatmapWidget::rawAddressesChanged);
        w.rawToggle()->click();
        QCOMPARE(changed.count(), 1);
        QVERIFY(w.rawAddresses());
        QVERIFY(w.data().rawAddresses);
        QVERIFY(px(0, 1) != colors.requested);  // a third memory, two thirds gap
        QCOMPARE(px(0, 0), colors.requested);
        // New data keeps the mode; switching back restores the squeezed grid.
        w.setData(twoRanges());
        QVERIFY(w.data().rawAddresses);
        w.setRawAddresses(false);
        QVERIFY(!w.rawToggle()->isChecked());
        QVERIFY(!w.data().rawAddresses);
        QCOMPARE(px(0, 1), colors.requested);
    }

    void invalidDataIsRefusedNotRead() {
        HeatmapWidget w;
        w.resize(600, 300);
        HeatmapData bad = knownGrid();
        bad.cells.resize(3);  // fewer cells than bins
        w.setData(bad);
        QVERIFY(w.plot()->image().isNull());
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QSignalSpy spy(&w, &HeatmapWidget::eventRequested);
        QTest::mouseClick(w.plot(), Qt::LeftButton, {}, w.plot()->plotRect().center());
        QCOMPARE(spy.count(), 0);
    }
};

QTEST_MAIN(TestHeatmapWidget)
#include "TestHeatmapWidget.moc"
