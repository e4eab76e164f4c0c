#include <QtTest>

#include "views/data/TimelinePeak.h"

using namespace allocscope::views;

// The event a freshly opened run shows first (views::peakEvent): where reserved memory peaked.
class TestTimelinePeak : public QObject {
    Q_OBJECT

    static TimelineBucket bucket(qint64 first, qint64 last, qint64 reserved, qint64 allocated) {
        TimelineBucket b;
        b.firstEvent = first;
        b.lastEvent = last;
        b.bytes[static_cast<std::size_t>(TimelineMetric::Reserved)] = {0, reserved};
        b.bytes[static_cast<std::size_t>(TimelineMetric::Allocated)] = {0, allocated};
        return b;
    }

private slots:
    void endOfTheBucketWhereReservedPeaked() {
        TimelineData t;
        t.buckets = {bucket(0, 9, 100, 90), bucket(10, 19, 300, 10), bucket(20, 29, 200, 200)};
        QCOMPARE(peakEvent(t, 30), qint64{19});
    }

    void amongEqualReservedPeaksTheMostAllocatedWins() {
        TimelineData t;
        t.buckets = {bucket(0, 9, 300, 50), bucket(10, 19, 300, 250), bucket(20, 29, 300, 100)};
        QCOMPARE(peakEvent(t, 30), qint64{19});
        // A later bucket equal in both does not move it: the first peak is shown.
        t.buckets.push_back(bucket(30, 39, 300, 250));
        QCOMPARE(peakEvent(t, 40), qint64{19});
    }

    void noBucketsShowsTheLastEventAndStaysInRange() {
        QCOMPARE(peakEvent(TimelineData{}, 12), qint64{11});
        QCOMPARE(peakEvent(TimelineData{}, 0), qint64{0});
        TimelineData t;
        t.buckets = {bucket(0, 50, 10, 10)};  // a bucket past the run's events (a stale overview)
        QCOMPARE(peakEvent(t, 20), qint64{19});
    }
};

QTEST_APPLESS_MAIN(TestTimelinePeak)
#include "TestTimelinePeak.moc"
