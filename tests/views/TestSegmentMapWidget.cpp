#include <QApplication>
#include <QScrollBar>
#include <QSignalSpy>
#include <QWheelEvent>
#include <QtTest>

#include "ViewTestData.h"
#include "views/theme/ThemePalette.h"
#include "views/widgets/LegendWidget.h"
#include "views/widgets/SegmentMapCanvas.h"
#include "views/widgets/SegmentMapWidget.h"

using namespace allocscope::views;
Q_DECLARE_METATYPE(allocscope::views::ThemeChoice)

namespace {
constexpr quint64 kMiB = 1024ull * 1024ull;
constexpr quint64 kSegA = 0x7f0001000000ull;
constexpr quint64 kSegB = 0x7f0004000000ull;

ViewBlock block(quint64 address, quint64 size, BlockState state, quint64 requested = 0) {
    ViewBlock b;
    b.address = address;
    b.size = size;
    b.state = state;
    b.requestedSize = requested;
    return b;
}

// Segment A (20 MiB): allocated 8 | inactive 4 | pending 4 | allocated 4 (2 requested).
// Segment B (10 MiB, expandable): allocated 4 | unmapped 6.
SegmentMapData knownMap() {
    SegmentMapData d;
    ViewSegment a;
    a.address = kSegA;
    a.totalSize = 20 * kMiB;
    a.blocks = {block(kSegA, 8 * kMiB, BlockState::Allocated, 8 * kMiB), block(kSegA + 8 * kMiB, 4 * kMiB, BlockState::Inactive),
                block(kSegA + 12 * kMiB, 4 * kMiB, BlockState::PendingFree, 4 * kMiB),
                block(kSegA + 16 * kMiB, 4 * kMiB, BlockState::Allocated, 2 * kMiB)};
    ViewSegment b;
    b.address = kSegB;
    b.totalSize = 10 * kMiB;
    b.expandable = true;
    b.blocks = {block(kSegB, 4 * kMiB, BlockState::Allocated, 4 * kMiB), block(kSegB + 4 * kMiB, 6 * kMiB, BlockState::Unmapped)};
    d.segments = {a, b};
    return d;
}

QColor pixelAt(SegmentMapCanvas* canvas, QPoint p) { return canvas->viewport()->grab().toImage().pixelColor(p); }
}  // namespace

class TestSegmentMapWidget : public QObject {
    Q_OBJECT
private slots:
    void cleanup() { applyTheme(*qApp, ThemeChoice::Light); }

    void paintsBlocksInStateColours_data() {
        QTest::addColumn<ThemeChoice>("theme");
        QTest::newRow("light") << ThemeChoice::Light;
        QTest::newRow("dark") << ThemeChoice::Dark;
    }
    void paintsBlocksInStateColours() {
        QFETCH(ThemeChoice, theme);
        applyTheme(*qApp, theme);
        const ThemePalette expected = theme == ThemeChoice::Dark ? ThemePalette::dark() : ThemePalette::light();
        SegmentMapWidget w;
        w.resize(1280, 400);
        w.setData(knownMap());
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        SegmentMapCanvas* c = w.canvas();
        const QImage img = c->viewport()->grab().toImage();
        QCOMPARE(img.pixelColor(c->blockRect(kSegA).center()), expected.requested);
        QCOMPARE(img.pixelColor(c->blockRect(kSegA + 8 * kMiB).center()), expected.inactive);
        QCOMPARE(img.pixelColor(c->blockRect(kSegA + 12 * kMiB).center()), expected.pendingFree);
        // Half of the last block was requested: its left quarter is "requested", its right quarter waste.
        const QRect wasteBlock = c->blockRect(kSegA + 16 * kMiB);
        QCOMPARE(img.pixelColor(wasteBlock.left() + wasteBlock.width() / 4, wasteBlock.center().y()), expected.requested);
        QCOMPARE(img.pixelColor(wasteBlock.left() + wasteBlock.width() * 3 / 4, wasteBlock.center().y()), expected.roundingWaste);
        // Unmapped pages are hatched: both the base and the hatch colour appear, nothing else.
        const QRect unmapped = c->blockRect(kSegB + 4 * kMiB);
        bool sawBase = false, sawHatch = false;
        for (int x = unmapped.left() + 3; x < unmapped.right() - 3; ++x) {
            const QColor px = img.pixelColor(x, unmapped.center().y());
            sawBase |= px == expected.unmapped;
            sawHatch |= px == expected.unmappedHatch;
            QVERIFY2(px == expected.unmapped || px == expected.unmappedHatch, qPrintable(px.name()));
        }
        QVERIFY(sawBase && sawHatch);
        // Widths are proportional to sizes: the 20 MiB row is twice the 10 MiB row.
        QVERIFY(qAbs(c->rowWidth(0) - 2 * c->rowWidth(1)) <= 2);
        // The legend shows the same colours as the map.
        QCOMPARE(w.legend()->entries().front().color, expected.requested);
    }

    void followsALiveThemeSwitch() {
        applyTheme(*qApp, ThemeChoice::System);
        QCoreApplication::processEvents();
        const QPalette startup = qApp->palette();
        applyTheme(*qApp, ThemeChoice::Light);
        QCoreApplication::processEvents();
        SegmentMapWidget w;
        w.resize(800, 300);
        w.setData(knownMap());
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        const QPoint inactive = w.canvas()->blockRect(kSegA + 8 * kMiB).center();
        QCOMPARE(pixelAt(w.canvas(), inactive), ThemePalette::light().inactive);
        applyTheme(*qApp, ThemeChoice::Dark);
        QCoreApplication::processEvents();  // the new palette arrives by posted events
        QCOMPARE(pixelAt(w.canvas(), inactive), ThemePalette::dark().inactive);
        QCOMPARE(w.legend()->entries().at(2).color, ThemePalette::dark().inactive);
        QVERIFY(ThemePalette::isDark(w.palette()));
        // System goes back to what the application started with.
        applyTheme(*qApp, ThemeChoice::System);
        QCoreApplication::processEvents();
        QCOMPARE(qApp->palette().color(QPalette::Window), startup.color(QPalette::Window));
    }

    void clickSelectsTheBlockUnderTheMouse() {
        SegmentMapWidget w;
        w.resize(1000, 300);
        w.setData(knownMap());
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QSignalSpy spy(&w, &SegmentMapWidget::blockSelected);
        SegmentMapCanvas* c = w.canvas();
        QTest::mouseClick(c->viewport(), Qt::LeftButton, {}, c->blockRect(kSegA + 12 * kMiB).center());
        QCOMPARE(spy.count(), 1);
        QCOMPARE(spy.at(0).at(0).toULongLong(), kSegA + 12 * kMiB);
        QCOMPARE(w.selectedBlock().value(), kSegA + 12 * kMiB);
        // The selection outline is drawn in the selection colour.
        const QRect r = c->blockRect(kSegA + 12 * kMiB);
        QCOMPARE(pixelAt(c, QPoint(r.center().x(), r.top() + 1)), ThemePalette::forPalette(c->palette()).selection);
        // A click in the label column selects nothing new.
        QTest::mouseClick(c->viewport(), Qt::LeftButton, {}, QPoint(10, r.center().y()));
        QCOMPARE(spy.count(), 1);
        QVERIFY(c->describeBlock(*c->blockAt(r.center())).contains(QStringLiteral("Pending free")));
        const auto waste = c->blockAt(c->blockRect(kSegA + 16 * kMiB).center());
        QVERIFY(waste.has_value());
        QVERIFY(c->describeBlock(*waste).contains(QStringLiteral("rounding waste 2.00 MiB")));
    }

    void arrowKeysMoveTheSelection() {
        SegmentMapWidget w;
        w.resize(1000, 300);
        w.setData(knownMap());
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        SegmentMapCanvas* c = w.canvas();
        QSignalSpy spy(&w, &SegmentMapWidget::blockSelected);
        QTest::mouseClick(c->viewport(), Qt::LeftButton, {}, c->blockRect(kSegA).center());
        QTest::keyClick(c, Qt::Key_Right);
        QCOMPARE(w.selectedBlock().value(), kSegA + 8 * kMiB);
        QTest::keyClick(c, Qt::Key_Right);
        QTest::keyClick(c, Qt::Key_Right);
        QTest::keyClick(c, Qt::Key_Right);  // stays on the last block of the row
        QCOMPARE(w.selectedBlock().value(), kSegA + 16 * kMiB);
        // Down lands on the block at the same offset (16 MiB) in the next row: clamped to the
        // 10 MiB segment's last block.
        QTest::keyClick(c, Qt::Key_Down);
        QCOMPARE(w.selectedBlock().value(), kSegB + 4 * kMiB);
        // Up from offset 4 MiB of segment B lands on the block covering offset 4 MiB of A.
        QTest::keyClick(c, Qt::Key_Up);
        QCOMPARE(w.selectedBlock().value(), kSegA);
        QCOMPARE(spy.count(), 6);
        QCOMPARE(spy.last().at(0).toULongLong(), kSegA);
        QTest::keyClick(c, Qt::Key_Escape);
        QVERIFY(!w.selectedBlock().has_value());
    }

    void zoomWidensRows() {
        SegmentMapWidget w;
        w.resize(900, 300);
        w.setData(knownMap());
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        SegmentMapCanvas* c = w.canvas();
        const int before = c->rowWidth(0);
        QVERIFY(before > 100);
        QSignalSpy spy(&w, &SegmentMapWidget::zoomChanged);
        // Ctrl+wheel up, over the bars.
        const QPoint at = c->blockRect(kSegA + 8 * kMiB).center();
        QWheelEvent wheel(at, c->viewport()->mapToGlobal(at), QPoint(), QPoint(0, 240), Qt::NoButton, Qt::ControlModifier,
                          Qt::NoScrollPhase, false);
        QApplication::sendEvent(c->viewport(), &wheel);
        QCOMPARE(spy.count(), 1);
        QVERIFY(w.zoom() > 1.4);
        QVERIFY(qAbs(c->rowWidth(0) - qRound(before * w.zoom())) <= 2);
        QVERIFY(c->horizontalScrollBar()->maximum() > 0);
        // The byte under the mouse stays under the mouse.
        QVERIFY(c->blockRect(kSegA + 8 * kMiB).contains(at));
        QTest::keyClick(c, Qt::Key_Plus);
        QVERIFY(c->rowWidth(0) > qRound(before * 2.0));
        QTest::keyClick(c, Qt::Key_0, Qt::ControlModifier);
        QCOMPARE(w.zoom(), 1.0);
        QVERIFY(qAbs(c->rowWidth(0) - before) <= 1);
        QCOMPARE(c->horizontalScrollBar()->maximum(), 0);
    }

    void thousandsOfSegmentsScrollAndSelect() {
        SegmentMapWidget w;
        w.resize(1280, 720);
        w.setData(viewtest::realisticSegmentMap(5000));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        SegmentMapCanvas* c = w.canvas();
        QVERIFY(c->verticalScrollBar()->maximum() > 5000 * 20);
        const quint64 lastBlock = w.data().segments.back().blocks.front().address;
        QVERIFY(w.selectBlock(lastBlock));
        // Selecting scrolls the row into view.
        const QRect r = c->blockRect(lastBlock);
        QVERIFY(c->viewport()->rect().intersects(r));
        QVERIFY(!w.selectBlock(lastBlock + 1));  // not a block start
        QCOMPARE(w.selectedBlock().value(), lastBlock);
        QVERIFY(!c->viewport()->grab().isNull());
        // Selection survives a data update that keeps the block.
        w.setData(viewtest::realisticSegmentMap(5000));
        QCOMPARE(w.selectedBlock().value(), lastBlock);
    }

    void emptyMapShowsAMessageNotACrash() {
        SegmentMapWidget w;
        w.resize(400, 200);
        w.setData({});
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QTest::mouseClick(w.canvas()->viewport(), Qt::LeftButton, {}, QPoint(300, 50));
        QTest::keyClick(w.canvas(), Qt::Key_Down);
        QVERIFY(!w.selectedBlock().has_value());
    }
};

QTEST_MAIN(TestSegmentMapWidget)
#include "TestSegmentMapWidget.moc"
