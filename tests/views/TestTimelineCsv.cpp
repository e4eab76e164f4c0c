#include <QtTest>

#include "views/data/TimelineCsv.h"

using namespace allocscope::views;

// The timeline CSV that File ▸ Export writes: exact text, since scripts and spreadsheets read it.
class TestTimelineCsv : public QObject {
    Q_OBJECT
private slots:
    void emptyTimelineIsTheHeaderOnly() {
        QCOMPARE(timelineCsv(TimelineData{}),
                 QStringLiteral("first_event,last_event,allocated_min,allocated_max,reserved_min,reserved_max,"
                                "active_min,active_max,requested_min,requested_max\n"));
    }

    void bucketsAreRowsInMetricOrder() {
        TimelineData t;
        TimelineBucket a;
        a.firstEvent = 0;
        a.lastEvent = 9;
        a.bytes[static_cast<std::size_t>(TimelineMetric::Allocated)] = {1, 2};
        a.bytes[static_cast<std::size_t>(TimelineMetric::Reserved)] = {3, 4};
        a.bytes[static_cast<std::size_t>(TimelineMetric::Active)] = {5, 6};
        a.bytes[static_cast<std::size_t>(TimelineMetric::Requested)] = {7, 8};
        a.fragmentation = 0.5;  // not exported
        TimelineBucket b;
        b.firstEvent = 10;
        b.lastEvent = 10;
        // Byte counts past 32 bits must not be truncated (an 80 GiB device).
        b.bytes[static_cast<std::size_t>(TimelineMetric::Reserved)] = {85899345920LL, 85899345920LL};
        t.buckets = {a, b};
        t.markers.push_back({3, MarkerKind::Oom, QStringLiteral("oom")});  // not exported
        t.phases.push_back({QStringLiteral("forward"), 0, 10});            // not exported

        const QStringList lines = timelineCsv(t).split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), 4);  // header, two buckets, and the empty rest after the final '\n'
        QCOMPARE(lines[1], QStringLiteral("0,9,1,2,3,4,5,6,7,8"));
        QCOMPARE(lines[2], QStringLiteral("10,10,0,0,85899345920,85899345920,0,0,0,0"));
        QCOMPARE(lines[3], QString());
    }
};

QTEST_GUILESS_MAIN(TestTimelineCsv)
#include "TestTimelineCsv.moc"
