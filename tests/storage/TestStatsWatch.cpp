// StatsWatch decides when a recording stores the statistics whole (a stats fixup): exactly when a
// value moved in a way that no event explains. Checked key by key over all 122 memory_stats()
// keys, so that a watched value left out (or one watched that events move) shows by its name.
#include <QtTest>

#include <string>

#include "allocator/core/DeviceStats.h"
#include "storage/session/StatsWatch.h"

using namespace allocscope;

namespace {

// Every key at 100: room to go down by one.
alloc::DeviceStats level() {
    alloc::DeviceStats stats;
    for (const auto& [key, value] : stats.flatten()) stats.set(key, 100);
    return stats;
}

bool endsWith(const std::string& s, const char* tail) { return s.ends_with(tail); }

}  // namespace

class TestStatsWatch : public QObject {
    Q_OBJECT

private slots:
    void everyKeyMovesAsItsRuleSays() {
        const alloc::DeviceStats base = level();
        int lowered = 0;
        for (const auto& [key, value] : base.flatten()) {
            // Events raise peaks, accumulated totals and the event counts, and move currents,
            // freed totals and nothing else; the retry and stream-sync counters have no event.
            const bool eventless = key == "num_alloc_retries" || key == "num_sync_all_streams";
            const bool onlyGrows = endsWith(key, ".peak") || endsWith(key, ".allocated") || key == "num_ooms" ||
                                   key == "num_device_alloc" || key == "num_device_free";
            for (const int step : {+1, -1}) {
                storage::StatsWatch watch(base);
                alloc::DeviceStats now = base;
                QVERIFY(now.set(key, value + step));
                const bool want = eventless || (onlyGrows && step < 0);
                QVERIFY2(watch.moved(now) == want, (key + (step > 0 ? " up" : " down")).c_str());
                // What it saw is now the last seen: the same values again are no move.
                QVERIFY2(!watch.moved(now), (key + " seen twice").c_str());
                lowered += want && step < 0;
            }
        }
        QCOMPARE(lowered, 9 * 3 * 2 + 2 * 2 + 5);  // peak and allocated of 29 Stats, 5 counters
        // Nothing moved at all.
        storage::StatsWatch watch(base);
        QVERIFY(!watch.moved(base));
    }

    // A reset in one value is seen even when events raised others in the same step.
    void resetAmongGrowthIsSeen() {
        const alloc::DeviceStats base = level();
        storage::StatsWatch watch(base);
        alloc::DeviceStats now = base;
        now.allocated_bytes[alloc::kAggregate].increase(4096);
        now.segment[alloc::kLargePool].increase(1);
        now.oversize_segments.peak = 0;
        QVERIFY(watch.moved(now));
        alloc::DeviceStats later = now;
        later.allocated_bytes[alloc::kAggregate].increase(512);
        QVERIFY(!watch.moved(later));
    }
};

QTEST_GUILESS_MAIN(TestStatsWatch)
#include "TestStatsWatch.moc"
