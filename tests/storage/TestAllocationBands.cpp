// The Allocations view's data (issue 16): each run's largest allocations and their lifetimes,
// stored when the run is recorded (allocation_band) or computed from the events for a session
// recorded before that table existed. Checked against a brute-force ranking of the recorded events.
#include <QtTest>
#include <QTemporaryDir>

#include <algorithm>
#include <map>

#include "storage/session/AllocationBandTable.h"
#include "storage/session/AllocationBands.h"
#include "storage/session/SessionReader.h"
#include "storage/session/TimelineSeries.h"
#include "tests/storage/StorageTestSupport.h"

using namespace allocscope;

namespace {

// Every allocation of the event stream: alloc to free_requested (or the end), largest first.
std::vector<storage::AllocationBand> bruteForce(const std::vector<alloc::Event>& events) {
    std::map<std::uint64_t, storage::AllocationBand> live;
    std::map<std::uint64_t, alloc::PoolId> pools;
    std::vector<storage::AllocationBand> all;
    for (const alloc::Event& e : events) {
        if (e.action == alloc::EventAction::Alloc) {
            storage::AllocationBand b;
            b.allocSeq = e.seq;
            b.address = e.address;
            b.size = e.roundedSize;
            b.requested = e.size;
            b.stream = e.stream;
            b.stackId = e.stackId;
            live[e.address] = b;
        } else if (e.action == alloc::EventAction::FreeRequested && live.count(e.address)) {
            live[e.address].freeSeq = e.seq;
            all.push_back(live[e.address]);
            live.erase(e.address);
        }
    }
    for (const auto& [address, b] : live) all.push_back(b);
    std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
        return a.size != b.size ? a.size > b.size : a.allocSeq < b.allocSeq;
    });
    return all;
}

}  // namespace

class TestAllocationBands : public QObject {
    Q_OBJECT

private slots:
    void storedBandsAreTheLargestAllocations() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("bands.allocscope").toStdString();
        storagetest::RecordedRun run;
        {
            storage::SessionWriter writer(path);
            run = storagetest::recordProgram(&writer, storagetest::randomProgram(7, 3000), "default");
        }
        const std::vector<storage::AllocationBand> expected = bruteForce(run.events);
        QVERIFY(expected.size() > 500);
        storage::SessionReader reader(path);
        const storage::AllocationOverview overview = storage::AllocationBands::load(reader, run.runNumber);
        QVERIFY(!overview.computedFromEvents);
        const std::size_t kept = std::min(expected.size(), storage::AllocationRanking::kKept);
        QCOMPARE(overview.bands.size(), kept);
        for (std::size_t i = 0; i < kept; ++i) {
            QCOMPARE(overview.bands[i].allocSeq, expected[i].allocSeq);
            QCOMPARE(overview.bands[i].freeSeq, expected[i].freeSeq);
            QCOMPARE(overview.bands[i].size, expected[i].size);
            QCOMPARE(overview.bands[i].requested, expected[i].requested);
            QCOMPARE(overview.bands[i].address, expected[i].address);
            QCOMPARE(overview.bands[i].stream, expected[i].stream);
        }
        // The envelope holds the run's allocated bytes: its maximum is their maximum over the
        // events (the program resets PyTorch's own peak now and then).
        storage::SeriesValues series;
        std::int64_t most = 0;
        for (const alloc::Event& e : run.events) {
            series.apply(e);
            most = std::max(most, series.allocated);
        }
        QCOMPARE(*std::max_element(overview.allocatedMax.begin(), overview.allocatedMax.end()), most);
        QCOMPARE(overview.eventCount, static_cast<std::uint64_t>(run.events.size()));
    }

    void rankingKeepsOnlyTheLargest() {
        // A bounded ranking over many allocations keeps exactly the top of the brute-force order.
        const storagetest::RecordedRun run = storagetest::recordProgram(nullptr, storagetest::randomProgram(11, 4000), "default");
        storage::AllocationRanking ranking(50);
        for (const alloc::Event& e : run.events) ranking.observe(e);
        const std::vector<storage::AllocationBand> kept = ranking.finish();
        std::vector<storage::AllocationBand> expected = bruteForce(run.events);
        expected.resize(50);
        QCOMPARE(kept.size(), expected.size());
        for (std::size_t i = 0; i < kept.size(); ++i) {
            QCOMPARE(kept[i].allocSeq, expected[i].allocSeq);
            QCOMPARE(kept[i].freeSeq, expected[i].freeSeq);
        }
    }

    void olderSessionComputesTheSameBands() {
        // A session written before allocation_band existed: the bands come from the events,
        // equal to the stored ones, and the file is not written.
        QTemporaryDir dir;
        const std::string path = dir.filePath("old.allocscope").toStdString();
        int number = 0;
        {
            storage::SessionWriter writer(path);
            number = storagetest::recordProgram(&writer, storagetest::randomProgram(3, 2000), "expandable").runNumber;
        }
        std::vector<storage::AllocationBand> stored;
        {
            storage::SessionReader reader(path);
            stored = storage::AllocationBands::load(reader, number).bands;
        }
        {
            storage::SqliteDb db(path, storage::SqliteDb::Mode::ReadWriteCreate);
            db.exec("DROP TABLE allocation_band");
        }
        const QByteArray before = testfiles::sha256Of(QString::fromStdString(path));
        storage::SessionReader reader(path);
        const storage::AllocationOverview overview = storage::AllocationBands::load(reader, number);
        QVERIFY(overview.computedFromEvents);
        QCOMPARE(overview.bands.size(), stored.size());
        QVERIFY(overview.bands == stored);
        QCOMPARE(testfiles::sha256Of(QString::fromStdString(path)), before);
    }

    void cancelledLoadIsEmpty() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("c.allocscope").toStdString();
        int number = 0;
        {
            storage::SessionWriter writer(path);
            number = storagetest::recordProgram(&writer, storagetest::randomProgram(5, 2000), "default").runNumber;
        }
        {
            storage::SqliteDb db(path, storage::SqliteDb::Mode::ReadWriteCreate);
            db.exec("DROP TABLE allocation_band");
        }
        storage::SessionReader reader(path);
        const storage::AllocationOverview overview = storage::AllocationBands::load(reader, number, [](double) { return false; });
        QVERIFY(overview.bands.empty());
        QCOMPARE(overview.eventCount, std::uint64_t(0));
    }
};

QTEST_GUILESS_MAIN(TestAllocationBands)
#include "TestAllocationBands.moc"
