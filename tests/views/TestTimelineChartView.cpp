#include <QApplication>
#include <QSet>
#include <QSignalSpy>
#include <QtTest>

#include "ViewTestData.h"
#include "views/charts/TimelineChartView.h"
#include "views/charts/TimelineDownsampler.h"
#include "views/theme/ThemePalette.h"

using namespace allocscope::views;

namespace {
TimelineBucket bucket(qint64 first, qint64 last, qint64 lo, qint64 hi, double frag = 0.0) {
    TimelineBucket b;
    b.firstEvent = first;
    b.lastEvent = last;
    for (MinMax& mm : b.bytes) mm = MinMax{lo, hi};
    b.fragmentation = frag;
    return b;
}

double maxY(const QList<QPointF>& points) {
    double m = -1;
    for (const QPointF& p : points) m = std::max(m, p.y());
    return m;
}
double minY(const QList<QPointF>& points) {
    double m = 1e300;
    for (const QPointF& p : points) m = std::min(m, p.y());
    return m;
}
}  // namespace

class TestTimelineChartView : public QObject {
    Q_OBJECT
private slots:
    void cleanup() { applyTheme(*qApp, ThemeChoice::Light); }

    void downsamplerKeepsExtremes() {
        std::vector<TimelineBucket> in;
        for (int i = 0; i < 1000; ++i) in.push_back(bucket(i * 10, i * 10 + 9, 100 + i % 7, 200 + i % 13, (i % 10) / 10.0));
        in[517] = bucket(5170, 5179, 3, 999999, 0.95);
        const auto out = TimelineDownsampler::downsample(in, 64);
        QCOMPARE(out.size(), std::size_t(64));
        QCOMPARE(out.front().firstEvent, qint64(0));
        QCOMPARE(out.back().lastEvent, qint64(9999));
        qint64 lo = LLONG_MAX, hi = 0;
        double frag = 0;
        for (std::size_t i = 0; i < out.size(); ++i) {
            if (i > 0) QCOMPARE(out[i].firstEvent, out[i - 1].lastEvent + 1);  // contiguous, no overlap
            lo = std::min(lo, out[i].bytes[0].min);
            hi = std::max(hi, out[i].bytes[0].max);
            frag = std::max(frag, out[i].fragmentation);
        }
        QCOMPARE(lo, qint64(3));
        QCOMPARE(hi, qint64(999999));
        QCOMPARE(frag, 0.95);
        // Fewer buckets than the target: unchanged.
        QCOMPARE(TimelineDownsampler::downsample(in, 5000).size(), in.size());
    }

    void seriesHoldOnePointPerBucketWithMinAndMax() {
        TimelineData d;
        for (int i = 0; i < 100; ++i) {
            TimelineBucket b = bucket(i * 10, i * 10 + 9, 0, 0, i / 200.0);
            b.bytes[static_cast<int>(TimelineMetric::Allocated)] = MinMax{qint64(i) * 1024 * 1024, qint64(i + 1) * 1024 * 1024};
            b.bytes[static_cast<int>(TimelineMetric::Reserved)] = MinMax{qint64(200) * 1024 * 1024, qint64(200) * 1024 * 1024};
            d.buckets.push_back(b);
        }
        d.markers = {{500, MarkerKind::Oom, QStringLiteral("out of memory")}, {300, MarkerKind::Retry, {}}, {310, MarkerKind::Retry, {}}};
        TimelineChartView view;
        view.resize(1280, 400);
        view.setData(d);
        QCOMPARE(view.displayedBucketCount(), 100);
        QCOMPARE(view.byteUnit(), 1024.0 * 1024.0);  // MiB
        const QList<QPointF> upper = view.maxPoints(TimelineMetric::Allocated);
        const QList<QPointF> lower = view.minPoints(TimelineMetric::Allocated);
        QCOMPARE(upper.size(), 100);
        QCOMPARE(lower.size(), 100);
        QCOMPARE(maxY(upper), 100.0);
        QCOMPARE(minY(lower), 0.0);
        QCOMPARE(upper.at(10).y(), 11.0);
        QCOMPARE(lower.at(10).y(), 10.0);
        QCOMPARE(upper.at(10).x(), 104.5);  // the bucket's middle event
        QCOMPARE(view.maxPoints(TimelineMetric::Reserved).at(50).y(), 200.0);
        QCOMPARE(view.fragmentationPoints().size(), 100);
        QCOMPARE(view.fragmentationPoints().at(50).y(), 25.0);  // percent
        QCOMPARE(view.markerPoints(MarkerKind::Oom).size(), 1);
        QCOMPARE(view.markerPoints(MarkerKind::Retry).size(), 2);
        QCOMPARE(view.markerPoints(MarkerKind::GarbageCollection).size(), 0);
        QCOMPARE(view.markerPoints(MarkerKind::Oom).at(0), QPointF(500, 200));  // on the reserved line
        QVERIFY(view.markerShape(MarkerKind::Oom) != view.markerShape(MarkerKind::Retry));
    }

    void downsamplesToThePixelWidth() {
        TimelineChartView view;
        view.resize(800, 400);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        TimelineData d = viewtest::realisticTimeline(20000);
        d.buckets[12345].bytes[static_cast<int>(TimelineMetric::Allocated)].max = qint64(40) * 1024 * 1024 * 1024;
        view.setData(d);
        QVERIFY(view.displayedBucketCount() <= view.viewport()->width());
        QVERIFY(view.displayedBucketCount() >= view.viewport()->width() / 2);
        QCOMPARE(view.maxPoints(TimelineMetric::Allocated).size(), view.displayedBucketCount());
        QCOMPARE(maxY(view.maxPoints(TimelineMetric::Allocated)), 40.0);  // GiB: the spike survives
        // Wider window: more points.
        const int narrow = view.displayedBucketCount();
        view.resize(1600, 400);
        QVERIFY(view.displayedBucketCount() > narrow);
    }

    void clickMovesTheCursor() {
        TimelineChartView view;
        view.resize(1280, 480);
        view.setData(viewtest::realisticTimeline(3000));  // events 0 .. 11999
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QCoreApplication::processEvents();
        QSignalSpy spy(&view, &TimelineChartView::eventRequested);
        const QRectF plot = view.chart()->plotArea();
        const int x = view.xForEvent(6000);
        QVERIFY(x > plot.left() && x < plot.right());
        const int eventsPerPixel = static_cast<int>(12000 / plot.width()) + 1;
        QTest::mouseClick(view.viewport(), Qt::LeftButton, {}, QPoint(x, static_cast<int>(plot.center().y())));
        QCOMPARE(spy.count(), 1);
        QVERIFY(qAbs(spy.at(0).at(0).toLongLong() - 6000) <= eventsPerPixel);
        QCOMPARE(view.currentEvent(), spy.at(0).at(0).toLongLong());
        // The cursor is drawn at that x in the theme's cursor colour.
        const QImage img = view.grab().toImage();
        const QColor cursor = ThemePalette::forPalette(view.palette()).cursor;
        const int cx = view.xForEvent(view.currentEvent());
        bool found = false;
        for (int dx = -1; dx <= 1 && !found; ++dx) found = img.pixelColor(cx + dx, static_cast<int>(plot.center().y()) + 17) == cursor;
        QVERIFY(found);
        // Outside the plot: nothing.
        QTest::mouseClick(view.viewport(), Qt::LeftButton, {}, QPoint(2, 2));
        QCOMPARE(spy.count(), 1);
    }

    void darkThemeRecolours() {
        applyTheme(*qApp, ThemeChoice::Dark);
        TimelineChartView view;
        view.resize(800, 400);
        view.setData(viewtest::realisticTimeline(200));
        const QColor expected = ThemePalette::dark().metric[static_cast<int>(TimelineMetric::Allocated)];
        QCOMPARE(view.metricColor(TimelineMetric::Allocated), expected);
        applyTheme(*qApp, ThemeChoice::Light);
        QCoreApplication::processEvents();  // Qt delivers the new application palette by posted events
        QCOMPARE(view.metricColor(TimelineMetric::Allocated),
                 ThemePalette::light().metric[static_cast<int>(TimelineMetric::Allocated)]);
    }

    // Each metric's legend box has the line's solid colour in both themes (the band's faint fill
    // made reserved, active, allocated and requested look alike), and the four differ.
    void legendShowsEachMetricsSolidColour() {
        for (const ThemeChoice theme : {ThemeChoice::Light, ThemeChoice::Dark}) {
            applyTheme(*qApp, theme);
            QCoreApplication::processEvents();
            TimelineChartView view;
            view.resize(800, 400);
            view.setData(viewtest::realisticTimeline(200));
            QSet<QRgb> seen;
            for (int m = 0; m < kTimelineMetricCount; ++m) {
                const auto metric = static_cast<TimelineMetric>(m);
                const QColor legend = view.legendColor(metric);
                QCOMPARE(legend, view.metricColor(metric));
                QCOMPARE(legend.alpha(), 255);
                seen.insert(legend.rgb());
            }
            QCOMPARE(seen.size(), kTimelineMetricCount);
        }
    }

    void emptyDataIsHarmless() {
        TimelineChartView view;
        view.resize(600, 300);
        view.setData({});
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QSignalSpy spy(&view, &TimelineChartView::eventRequested);
        QTest::mouseClick(view.viewport(), Qt::LeftButton, {}, QPoint(300, 150));
        QCOMPARE(spy.count(), 0);
        QCOMPARE(view.displayedBucketCount(), 0);
    }
};

QTEST_MAIN(TestTimelineChartView)
#include "TestTimelineChartView.moc"
