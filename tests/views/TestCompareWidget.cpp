#include <QApplication>
#include <QLabel>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QTabWidget>
#include <QtTest>

#include "views/charts/CompareBarChart.h"
#include "views/charts/CompareColors.h"
#include "views/charts/CompareTimelineChart.h"
#include "views/theme/ThemePalette.h"
#include "views/widgets/CompareTableModel.h"
#include "views/widgets/CompareWidget.h"
#include "views/widgets/LegendWidget.h"
#include "views/widgets/SegmentMapCanvas.h"
#include "views/widgets/SegmentMapWidget.h"

using namespace allocscope::views;
Q_DECLARE_METATYPE(allocscope::views::ThemeChoice)

namespace {
constexpr quint64 kMiB = 1024ull * 1024ull;

CompareRun run(const QString& label, int number, quint64 peakMiB, quint64 mallocs) {
    CompareRun r;
    r.label = label;
    r.configText = label == QLatin1String("default") ? QString() : label;
    r.run = number;
    r.peakReserved = peakMiB * kMiB;
    r.peakAllocated = 1000 * kMiB;
    r.roundingWaste = 3 * kMiB;
    r.strandedFree = 176 * kMiB;
    r.cudaMallocs = mallocs;
    r.cudaFrees = 2;
    r.allocatorUs = 1234.5;
    return r;
}

// Three configs of one 100-op program: default (1194 MiB), expandable (1162 MiB, one OOM at op 70)
// and the async backend (no segments).
CompareData knownData() {
    CompareData d;
    d.program = QStringLiteral("fragmentation-101 on h100-80gb");
    d.opCount = 100;
    CompareRun a = run(QStringLiteral("default"), 1, 1194, 12);
    a.reservedTimeline = {{0, 0}, {10, 400 * qint64(kMiB)}, {50, 1194 * qint64(kMiB)}, {90, 800 * qint64(kMiB)}};
    CompareRun b = run(QStringLiteral("expandable_segments:True"), 2, 1162, 6);
    b.ooms = 1;
    b.firstOomOp = 70;
    b.retries = 1;
    b.reservedTimeline = {{0, 0}, {20, 1162 * qint64(kMiB)}};
    CompareRun c = run(QStringLiteral("backend:cudaMallocAsync"), -1, 1152, 0);
    c.asyncBackend = true;
    c.roundingWaste = c.strandedFree = 0;
    c.cudaFrees = 0;
    c.noMapReason = QStringLiteral("backend:cudaMallocAsync has no segments to show");
    c.reservedTimeline = {{0, 0}, {30, 1152 * qint64(kMiB)}};
    d.runs = {a, b, c};
    return d;
}

SegmentMapData oneSegmentMap(quint64 base, quint64 allocatedMiB) {
    SegmentMapData d;
    ViewSegment s;
    s.address = base;
    s.totalSize = 20 * kMiB;
    ViewBlock used;
    used.address = base;
    used.size = allocatedMiB * kMiB;
    used.requestedSize = used.size;
    used.state = BlockState::Allocated;
    ViewBlock rest;
    rest.address = base + used.size;
    rest.size = s.totalSize - used.size;
    rest.state = BlockState::Inactive;
    s.blocks = {used, rest};
    d.segments = {s};
    return d;
}

// Height in pixels of the run of `color` in the image column through the middle of the bar.
int barPixelHeight(const QImage& img, const QColor& color) {
    int best = 0;
    for (int x = 0; x < img.width(); ++x) {
        int run = 0;
        for (int y = 0; y < img.height(); ++y) {
            if (img.pixelColor(x, y) == color) {
                ++run;
                best = std::max(best, run);
            } else {
                run = 0;
            }
        }
    }
    return best;
}
}  // namespace

class TestCompareWidget : public QObject {
    Q_OBJECT
private slots:
    void cleanup() { applyTheme(*qApp, ThemeChoice::Light); }

    void barChartsShowEachConfigsValue() {
        CompareWidget w;
        w.resize(1280, 720);
        w.setData(knownData());
        CompareBarChart* peak = w.barChart(CompareMetric::PeakReserved);
        QCOMPARE(peak->barCount(), 3);
        QCOMPARE(peak->unitName(), QStringLiteral("MiB"));
        QCOMPARE(peak->barValue(0), 1194.0);
        QCOMPARE(peak->barValue(1), 1162.0);
        QCOMPARE(peak->barValue(2), 1152.0);
        QCOMPARE(peak->rawValue(0), 1194.0 * kMiB);
        QVERIFY(peak->axisMax() >= 1194.0);
        CompareBarChart* waste = w.barChart(CompareMetric::Waste);
        QCOMPARE(waste->barValue(0), 179.0);
        QVERIFY(waste->barToolTip(0).contains(QStringLiteral("stranded free 176 MiB")));
        QVERIFY(waste->barToolTip(2).contains(QStringLiteral("no segments")));
        CompareBarChart* mallocs = w.barChart(CompareMetric::CudaMallocs);
        QCOMPARE(mallocs->barValue(0), 12.0);
        QCOMPARE(mallocs->barValue(1), 6.0);
        QCOMPARE(mallocs->barValue(2), 0.0);
        QCOMPARE(w.barChart(CompareMetric::Ooms)->barValue(1), 1.0);
        QVERIFY(w.barChart(CompareMetric::Ooms)->barToolTip(1).contains(QStringLiteral("first at op 70")));
        QCOMPARE(w.barChart(CompareMetric::Retries)->barValue(1), 1.0);
        QCOMPARE(w.barChart(CompareMetric::AllocatorTime)->unitName(), QStringLiteral("µs"));
        QCOMPARE(w.barChart(CompareMetric::AllocatorTime)->barValue(0), 1234.5);
        for (int i = 0; i < 3; ++i) QCOMPARE(peak->barColor(i), CompareColors::forRun(i, Theme::Light));
        QVERIFY(!w.barChart(CompareMetric::Retries)->allZero());
        CompareBarChart none(CompareMetric::Retries);
        none.setRuns({run(QStringLiteral("default"), 1, 10, 1), run(QStringLiteral("x"), 2, 10, 1)});
        QVERIFY(none.allZero());  // says "0 for every config" instead of an empty plot
        QCOMPARE(w.legend()->entries().size(), 3);
        QCOMPARE(w.legend()->entries().at(1).label, QStringLiteral("expandable_segments:True"));
    }

    // Values above the bars only while each fits its bar: two configs in a roomy chart print
    // them; ten in the smallest chart would overprint each other, so they are left to the tooltip.
    void valueLabelsOnlyWhereTheyFit() {
        CompareBarChart roomy(CompareMetric::PeakReserved);
        roomy.resize(420, 320);
        roomy.setRuns({run(QStringLiteral("default"), 1, 1194, 12), run(QStringLiteral("x"), 2, 1162, 6)});
        roomy.show();
        QVERIFY(QTest::qWaitForWindowExposed(&roomy));
        QTRY_VERIFY(roomy.valueLabelsShown());
        std::vector<CompareRun> many;
        for (int i = 0; i < 10; ++i) many.push_back(run(QStringLiteral("c%1").arg(i), i + 1, 100000 + 1111 * static_cast<quint64>(i), 3));
        CompareBarChart crowded(CompareMetric::PeakReserved);
        crowded.resize(160, 140);
        crowded.setRuns(many);
        crowded.show();
        QVERIFY(QTest::qWaitForWindowExposed(&crowded));
        QTRY_VERIFY(!crowded.valueLabelsShown());
        QVERIFY(crowded.barToolTip(3).contains(QStringLiteral("c3")));
        // Widened, the same ten fit again.
        crowded.resize(1800, 400);
        QTRY_VERIFY(crowded.valueLabelsShown());
    }

    void barHeightsFollowTheValues_data() {
        QTest::addColumn<ThemeChoice>("theme");
        QTest::newRow("light") << ThemeChoice::Light;
        QTest::newRow("dark") << ThemeChoice::Dark;
    }
    void barHeightsFollowTheValues() {
        QFETCH(ThemeChoice, theme);
        applyTheme(*qApp, theme);
        QCoreApplication::processEvents();
        const Theme t = theme == ThemeChoice::Dark ? Theme::Dark : Theme::Light;
        CompareBarChart chart(CompareMetric::CudaMallocs);
        chart.resize(420, 320);
        CompareData d = knownData();
        chart.setRuns(d.runs);
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        const QImage img = chart.grab().toImage();
        const int h0 = barPixelHeight(img, CompareColors::forRun(0, t));
        const int h1 = barPixelHeight(img, CompareColors::forRun(1, t));
        QVERIFY2(h0 > 40, qPrintable(QStringLiteral("bar 0 is %1 px").arg(h0)));
        // 12 vs 6 calls: half the height (within antialiasing at the edges).
        QVERIFY2(std::abs(h0 - 2 * h1) <= 3, qPrintable(QStringLiteral("%1 vs %2 px").arg(h0).arg(h1)));
        QCOMPARE(barPixelHeight(img, CompareColors::forRun(2, t)), 0);  // 0 calls: no bar
        // The plot background follows the theme.
        const QColor bg = img.pixelColor(img.width() / 2, img.height() / 3);
        QCOMPARE(ThemePalette::isDark(QPalette(bg)), theme == ThemeChoice::Dark);
    }

    void tableShowsTheSameNumbers() {
        CompareWidget w;
        w.setData(knownData());
        CompareTableModel* m = w.tableModel();
        QCOMPARE(m->rowCount(), 3);
        QCOMPARE(m->columnCount(), int(CompareTableModel::NUM_COLUMNS));
        auto text = [m](int row, int column) { return m->data(m->index(row, column)).toString(); };
        auto raw = [m](int row, int column) { return m->data(m->index(row, column), CompareTableModel::SortRole); };
        QCOMPARE(text(0, CompareTableModel::ConfigColumn), QStringLiteral("default"));
        QCOMPARE(text(0, CompareTableModel::PeakReservedColumn), QStringLiteral("1,194.0 MiB"));
        QCOMPARE(text(1, CompareTableModel::PeakReservedColumn), QStringLiteral("1,162.0 MiB"));
        QCOMPARE(text(0, CompareTableModel::WasteColumn), QStringLiteral("179.0 MiB"));
        QCOMPARE(raw(0, CompareTableModel::PeakReservedColumn).toULongLong(), 1194ull * kMiB);
        QCOMPARE(raw(1, CompareTableModel::PeakReservedColumn).toULongLong(), 1162ull * kMiB);
        QCOMPARE(raw(0, CompareTableModel::WasteColumn).toULongLong(), 179ull * kMiB);
        QCOMPARE(text(0, CompareTableModel::CudaMallocColumn), QStringLiteral("12"));
        QCOMPARE(text(1, CompareTableModel::OomsColumn), QStringLiteral("1 (op 70)"));
        QCOMPARE(text(0, CompareTableModel::AllocatorTimeColumn), QStringLiteral("1.23 ms"));
        QCOMPARE(text(1, CompareTableModel::RunColumn), QStringLiteral("2"));
        // The async backend has no segments: no waste or driver calls to show, and no run.
        QCOMPARE(text(2, CompareTableModel::WasteColumn), QStringLiteral("—"));
        QCOMPARE(text(2, CompareTableModel::CudaMallocColumn), QStringLiteral("—"));
        QCOMPARE(text(2, CompareTableModel::RunColumn), QStringLiteral("—"));
        QVERIFY(m->data(m->index(2, CompareTableModel::WasteColumn), Qt::ToolTipRole).toString().contains(QStringLiteral("no segments")));
        QCOMPARE(m->data(m->index(1, CompareTableModel::ConfigColumn), Qt::DecorationRole).value<QColor>(),
                 CompareColors::forRun(1, Theme::Light));
        for (int c = 0; c < m->columnCount(); ++c) {
            QVERIFY(!m->headerData(c, Qt::Horizontal).toString().isEmpty());
            QVERIFY(!m->headerData(c, Qt::Horizontal, Qt::ToolTipRole).toString().isEmpty());
        }
        const QStringList csv = w.tableCsv().trimmed().split(QLatin1Char('\n'));
        QCOMPARE(csv.size(), 4);
        QVERIFY(csv[0].startsWith(QStringLiteral("config,config_string,peak_reserved_bytes,")));
        QVERIFY(csv[1].startsWith(QStringLiteral("default,,%1,%2,%3,12,2,0,0,1234.500,1,").arg(1194ull * kMiB).arg(1000ull * kMiB).arg(179ull * kMiB)));
        QVERIFY(csv[2].startsWith(QStringLiteral("expandable_segments:True,expandable_segments:True,%1,").arg(1162ull * kMiB)));
        QVERIFY(csv[3].startsWith(QStringLiteral("backend:cudaMallocAsync,backend:cudaMallocAsync,%1,%2,,,,,0,").arg(1152ull * kMiB).arg(1000ull * kMiB)));
    }

    void timelinesAreOverlaidByOp() {
        CompareWidget w;
        w.resize(1280, 720);
        w.setData(knownData());
        CompareTimelineChart* t = w.timelineChart();
        QCOMPARE(t->lineCount(), 3);
        QCOMPARE(t->byteUnit(), double(kMiB));
        QCOMPARE(t->lineName(1), QStringLiteral("expandable_segments:True"));
        // Steps: the value holds until the op that changes it; every line runs to the last op.
        const QList<QPointF> p = t->linePoints(0);
        const QList<QPointF> expected = {{0, 0}, {10, 0}, {10, 400}, {50, 400}, {50, 1194}, {90, 1194}, {90, 800}, {99, 800}};
        QCOMPARE(p, expected);
        QCOMPARE(t->linePoints(1).back(), QPointF(99, 1162));
        for (int i = 0; i < 3; ++i) QCOMPARE(t->lineColor(i), CompareColors::forRun(i, Theme::Light));
    }

    void sideBySideMapsAtTheSelectedOp() {
        CompareWidget w;
        w.resize(1280, 720);
        CompareData d = knownData();
        w.setData(d);
        w.tabs()->setCurrentIndex(2);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QCOMPARE(w.currentOp(), qint64(99));  // the end of the program by default
        QSignalSpy requested(&w, &CompareWidget::mapsRequested);
        QSignalSpy changed(&w, &CompareWidget::opChanged);
        w.setCurrentOp(42);
        QCOMPARE(requested.count(), 1);
        QCOMPARE(requested.at(0).at(0).toLongLong(), qint64(42));
        QCOMPARE(changed.count(), 0);  // set from outside: not a user change
        QCOMPARE(w.timelineChart()->currentOp(), qint64(42));
        QCOMPARE(w.findChild<QSpinBox*>()->value(), 42);

        CompareMaps maps;
        maps.op = 42;
        maps.maps = {oneSegmentMap(0x7f0000000000ull, 8), oneSegmentMap(0x7f1000000000ull, 12), std::nullopt};
        w.setMaps(maps);
        QVERIFY(w.segmentMap(0)->isVisible());
        QVERIFY(w.segmentMap(1)->isVisible());
        QVERIFY(!w.segmentMap(2)->isVisible());
        QVERIFY(w.mapNote(2)->isVisible());
        QVERIFY(w.mapNote(2)->text().contains(QStringLiteral("has no segments")));
        QCOMPARE(w.segmentMap(0)->data().segments.at(0).blocks.at(0).size, 8 * kMiB);
        QCOMPARE(w.segmentMap(1)->data().segments.at(0).blocks.at(0).size, 12 * kMiB);
        // The maps are painted with the state colours.
        SegmentMapCanvas* c = w.segmentMap(1)->canvas();
        const QImage img = c->viewport()->grab().toImage();
        QCOMPARE(img.pixelColor(c->blockRect(0x7f1000000000ull).center()), ThemePalette::light().requested);
        QCOMPARE(img.pixelColor(c->blockRect(0x7f1000000000ull + 12 * kMiB).center()), ThemePalette::light().inactive);

        // An answer for an op the user already left is ignored.
        CompareMaps stale;
        stale.op = 7;
        stale.maps = {oneSegmentMap(0x7f0000000000ull, 2), std::nullopt, std::nullopt};
        w.setMaps(stale);
        QCOMPARE(w.segmentMap(0)->data().segments.at(0).blocks.at(0).size, 8 * kMiB);

        // The user moving the op selector asks for maps and says so.
        w.findChild<QSlider*>()->setValue(60);
        QCOMPARE(changed.count(), 1);
        QCOMPARE(requested.back().at(0).toLongLong(), qint64(60));
        QCOMPARE(w.timelineChart()->currentOp(), qint64(60));
    }

    void coloursFollowTheTheme() {
        CompareWidget w;
        w.resize(1280, 720);
        w.setData(knownData());
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        applyTheme(*qApp, ThemeChoice::Dark);
        QCoreApplication::processEvents();
        QCOMPARE(w.legend()->entries().at(0).color, CompareColors::forRun(0, Theme::Dark));
        QCOMPARE(w.barChart(CompareMetric::PeakReserved)->barColor(1), CompareColors::forRun(1, Theme::Dark));
        QCOMPARE(w.timelineChart()->lineColor(2), CompareColors::forRun(2, Theme::Dark));
        QCOMPARE(w.tableModel()->data(w.tableModel()->index(0, 0), Qt::DecorationRole).value<QColor>(),
                 CompareColors::forRun(0, Theme::Dark));
        QVERIFY(CompareColors::forRun(0, Theme::Dark) != CompareColors::forRun(0, Theme::Light));
    }

    void emptyWidgetSaysWhatToDo() {
        CompareWidget w;
        w.resize(1280, 720);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.findChild<QLabel*>()->text().contains(QStringLiteral("No comparison yet")));
        QCOMPARE(w.barChart(CompareMetric::PeakReserved)->barCount(), 0);
        QCOMPARE(w.tableModel()->rowCount(), 0);
    }
};

QTEST_MAIN(TestCompareWidget)
#include "TestCompareWidget.moc"
