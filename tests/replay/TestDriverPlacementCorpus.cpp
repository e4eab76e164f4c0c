// The driver-placement corpus (tests/data/driver-placement, recorded with
// tests/gpu/run_driver_placement.sh on an NVIDIA H200): what it says about the CUDA driver, and how
// well DriverPlacementModel predicts it. The figures pinned here are those of
// tests/benchmarks/README.md ("the driver model"); a model change that moves them must update both.
#include <QtTest>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "DriverCorpus.h"
#include "ReplayTestData.h"
#include "allocator/replay/DriverPlacementModel.h"
#include "storage/import/TraceImport.h"

using namespace allocscope;

namespace {

std::string corpusDir() { return std::string(ALLOCSCOPE_TEST_DATA) + "/driver-placement"; }

struct SegmentEvent {
    bool alloc = true;
    std::uint64_t address = 0;
    std::uint64_t size = 0;
};

// For every new segment, how many live segments of its size lie below it: the only thing about
// placement that changes the allocator's decisions (best fit breaks equal-size ties by address).
std::vector<int> sameSizeRanks(const std::vector<SegmentEvent>& events) {
    std::map<std::uint64_t, std::uint64_t> live;
    std::vector<int> ranks;
    for (const SegmentEvent& e : events) {
        if (!e.alloc) {
            live.erase(e.address);
            continue;
        }
        ranks.push_back(static_cast<int>(std::count_if(live.begin(), live.end(), [&](const auto& l) {
            return l.second == e.size && l.first < e.address;
        })));
        live[e.address] = e.size;
    }
    return ranks;
}

std::vector<SegmentEvent> pytorchRun(const std::string& name) {
    std::ifstream in(corpusDir() + "/measured/pytorch_" + name + ".txt");
    std::vector<SegmentEvent> events;
    std::string action, address;
    std::uint64_t size = 0;
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream words(line);
        if (!(words >> action >> address >> size) || action.rfind("segment_", 0) != 0) continue;
        if (action == "segment_alloc" || action == "segment_free") {
            events.push_back(SegmentEvent{action == "segment_alloc", std::stoull(address, nullptr, 16), size});
        }
    }
    return events;
}

// A run of tests/gpu/run_pytorch_repeats.sh: its 122 statistics and its segment events.
struct RepeatRun {
    std::map<std::string, std::int64_t> stats;
    std::vector<SegmentEvent> events;
};

RepeatRun repeatRun(const std::string& name) {
    std::ifstream in(corpusDir() + "/measured/repeats/" + name + ".txt");
    RepeatRun run;
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream words(line);
        std::string first, second;
        std::int64_t value = 0;
        if (!(words >> first >> second >> value)) continue;
        if (first == "stat") run.stats[second] = value;
        if (first == "segment_alloc" || first == "segment_free") {
            run.events.push_back(SegmentEvent{first == "segment_alloc", std::stoull(second, nullptr, 16), static_cast<std::uint64_t>(value)});
        }
    }
    return run;
}

std::vector<SegmentEvent> recordedH100(const std::string& trace) {
    const auto traces = storage::importTraceFile(std::string(ALLOCSCOPE_TEST_DATA) + "/traces/" + trace + ".pickle");
    std::vector<SegmentEvent> events;
    for (const alloc::RecordedEntry& e : traces.front().entries) {
        if (e.action == alloc::EventAction::SegmentAlloc || e.action == alloc::EventAction::SegmentFree) {
            events.push_back(SegmentEvent{e.action == alloc::EventAction::SegmentAlloc, e.address, e.size});
        }
    }
    return events;
}

int differences(const std::vector<int>& a, const std::vector<int>& b) {
    int n = 0;
    for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) n += a[i] != b[i] ? 1 : 0;
    return n + static_cast<int>(std::max(a.size(), b.size()) - std::min(a.size(), b.size()));
}

}  // namespace

class TestDriverPlacementCorpus : public QObject {
    Q_OBJECT

private slots:
    // Every listed sequence has its calls and its measurement, names the machine, and some are
    // held out of the fitting.
    void corpusIsComplete() {
        const std::vector<std::string> names = replaytest::DriverCorpus::names(corpusDir());
        QCOMPARE(names.size(), std::size_t{22});
        int heldOut = 0;
        for (const std::string& name : names) {
            const replaytest::DriverSequence s = replaytest::DriverCorpus::load(corpusDir(), name);
            QCOMPARE(QString::fromStdString(s.gpu), QString("NVIDIA H200"));
            QVERIFY2(s.nvidiaSmi.find("580.159.04") != std::string::npos, s.nvidiaSmi.c_str());
            // The first 18 sequences ran 5 times; random_c..f, added to fit the model, 3 times.
            QCOMPARE(s.runs, name.rfind("random_", 0) == 0 && name != "random_a" && name != "random_b" ? 3 : 5);
            int placements = 0;
            for (const replaytest::DriverCall& c : s.calls) placements += c.op == 'm' || c.op == 'r' ? 1 : 0;
            QCOMPARE(static_cast<std::size_t>(placements), s.measured.size());
            heldOut += s.heldOut ? 1 : 0;
        }
        QCOMPARE(heldOut, 6);
    }

    // The bare driver is deterministic: five fresh processes per sequence gave the same addresses
    // relative to each process's first one (the base itself moves from process to process).
    void bareDriverIsDeterministic() {
        for (const std::string& name : replaytest::DriverCorpus::names(corpusDir())) {
            const replaytest::DriverSequence s = replaytest::DriverCorpus::load(corpusDir(), name);
            QVERIFY2(s.distinctRelative == 1, name.c_str());
        }
    }

    // A real PyTorch program is not: three fresh runs of train_gpt on the same H200 placed
    // same-size segments in different orders, and the H100 recording is one more sample.
    void pytorchRunsVary() {
        const std::vector<int> d1 = sameSizeRanks(pytorchRun("train_gpt__default.1"));
        const std::vector<int> d2 = sameSizeRanks(pytorchRun("train_gpt__default.2"));
        const std::vector<int> d3 = sameSizeRanks(pytorchRun("train_gpt__default.3"));
        QCOMPARE(d1.size(), std::size_t{67});
        QCOMPARE(differences(d1, d2), 0);
        QCOMPARE(differences(d1, d3), 2);
        const std::vector<int> r1 = sameSizeRanks(pytorchRun("train_gpt__rup4.1"));
        const std::vector<int> r2 = sameSizeRanks(pytorchRun("train_gpt__rup4.2"));
        const std::vector<int> r3 = sameSizeRanks(pytorchRun("train_gpt__rup4.3"));
        QCOMPARE(r1.size(), std::size_t{70});
        QCOMPARE(differences(r1, r2), 2);
        QCOMPARE(differences(r1, r3), 5);
        const std::vector<int> h100 = sameSizeRanks(recordedH100("train_gpt__rup4"));
        QCOMPARE(differences(h100, r1), 2);
        QCOMPARE(differences(h100, r2), 0);
        QCOMPARE(differences(h100, r3), 6);
        QCOMPARE(differences(sameSizeRanks(recordedH100("train_gpt__default")), d1), 3);
    }

    // Yet PyTorch's numbers do not move: every program of the shared traces, run three times on
    // the H200, gave the same 122 memory_stats() keys each time and the H100's (kv_growth_limited
    // under defaults excepted: its memory fraction is 5 % of another total memory), while the
    // train_gpt runs placed same-size segments in other orders.
    void pytorchStatsDoNotVaryWithPlacement() {
        const std::map<std::string, std::vector<int>> orderDifferences{
            {"train_gpt__default", {7, 8}}, {"train_gpt__rup4", {6, 6}}, {"train_gpt__msplit128", {9, 11}},
            {"train_gpt__gc06_msplit256", {11, 7}}};
        for (const QString& name : replaytest::traceNames()) {
            const std::string n = name.toStdString();
            const RepeatRun first = repeatRun(n + ".1");
            QCOMPARE(first.stats.size(), std::size_t{122});
            const std::vector<int> ranks = sameSizeRanks(first.events);
            for (int k = 2; k <= 3; ++k) {
                const RepeatRun other = repeatRun(n + "." + std::to_string(k));
                QVERIFY2(other.stats == first.stats, (n + " run " + std::to_string(k)).c_str());
                const int moved = differences(ranks, sameSizeRanks(other.events));
                const auto pinned = orderDifferences.find(n);
                QCOMPARE(moved, pinned == orderDifferences.end() ? 0 : pinned->second[static_cast<std::size_t>(k - 2)]);
            }
            const replaytest::GroundTruth h100 = replaytest::loadGroundTruth(name);
            QVERIFY(h100.loaded);
            int differing = 0;
            for (const auto& [key, value] : h100.stats) differing += first.stats.at(key) != value ? 1 : 0;
            QCOMPARE(differing, n == "kv_growth_limited__default" ? 44 : 0);
        }
    }

    // Nor does a PyTorch process follow the bare driver: the segment calls of train_gpt alone,
    // replayed on the bare driver, order same-size segments unlike the recording.
    void bareDriverIsNotAPytorchProcess() {
        for (const auto& [trace, want] : std::vector<std::pair<std::string, int>>{{"train_gpt__default", 10}, {"train_gpt__rup4", 12}}) {
            const replaytest::DriverSequence s = replaytest::DriverCorpus::load(corpusDir(), "trace_" + trace);
            std::vector<SegmentEvent> bare;
            for (const replaytest::DriverCall& c : s.calls) {
                if (c.op == 'm' || c.op == 'f') bare.push_back(SegmentEvent{c.op == 'm', s.measured.at(c.id), s.sizes.at(c.id)});
            }
            QCOMPARE(differences(sameSizeRanks(recordedH100(trace)), sameSizeRanks(bare)), want);
        }
    }

    // What a PyTorch process adds: the fitted model, from a fresh process's heap, run on the
    // segment calls of real train_gpt processes (H200). Their first ~30 segments land in holes
    // the runtime left above the first one, which no fresh heap has, so their addresses are off
    // (rup4 runs 1 and 3: from the 30th segment on every address is right until a 512 MiB one
    // lands 96 MiB lower than modelled); yet the same-size order, which best fit depends on, is
    // right in 47 to 50 of 59-61 decisions.
    void modelOnPytorchProcesses_data() {
        QTest::addColumn<QString>("run");
        QTest::addColumn<int>("exact");
        QTest::addColumn<int>("orderDecisions");
        QTest::addColumn<int>("orderRight");
        QTest::newRow("default 1") << "train_gpt__default.1" << 2 << 59 << 50;
        QTest::newRow("default 2") << "train_gpt__default.2" << 2 << 59 << 50;
        QTest::newRow("default 3") << "train_gpt__default.3" << 2 << 59 << 50;
        QTest::newRow("rup4 1") << "train_gpt__rup4.1" << 39 << 61 << 49;
        QTest::newRow("rup4 2") << "train_gpt__rup4.2" << 2 << 61 << 49;
        QTest::newRow("rup4 3") << "train_gpt__rup4.3" << 39 << 61 << 47;
    }
    void modelOnPytorchProcesses() {
        QFETCH(QString, run);
        QFETCH(int, exact);
        QFETCH(int, orderDecisions);
        QFETCH(int, orderRight);
        replaytest::DriverSequence s;
        s.name = run.toStdString();
        std::map<std::uint64_t, std::string> liveIds;  // driver address -> call id
        int n = 0;
        for (const SegmentEvent& e : pytorchRun(s.name)) {
            replaytest::DriverCall c;
            c.op = e.alloc ? 'm' : 'f';
            if (e.alloc) {
                c.id = "s" + std::to_string(n++);
                c.a = e.size;
                s.measured[c.id] = e.address;
                s.sizes[c.id] = e.size;
                liveIds[e.address] = c.id;
            } else {
                c.id = liveIds.at(e.address);
                liveIds.erase(e.address);
            }
            s.calls.push_back(c);
        }
        const alloc::RecordedTrace none;
        alloc::DriverPlacementModel model(none);
        const replaytest::PlacementScore score = replaytest::DriverCorpus::score(s, model);
        QCOMPARE(score.exact, exact);
        QCOMPARE(score.orderDecisions, orderDecisions);
        QCOMPARE(score.orderRight, orderRight);
    }

    // DriverPlacementModel with no recording to reuse (its DriverVaHeap alone, from a fresh
    // process) against the bare driver: every placement after each sequence's first (which only
    // fixes the origin) at the driver's address relative to the first, on the 16 sequences it
    // was fitted to and on the 6 held out of the fitting.
    void modelOnSequences_data() {
        QTest::addColumn<bool>("heldOut");
        QTest::addColumn<int>("placements");
        QTest::addColumn<int>("orderDecisions");
        QTest::newRow("fitted") << false << 1508 << 943;
        QTest::newRow("held out") << true << 571 << 396;
    }
    void modelOnSequences() {
        QFETCH(bool, heldOut);
        QFETCH(int, placements);
        QFETCH(int, orderDecisions);
        replaytest::PlacementScore total;
        int sequences = 0;
        for (const std::string& name : replaytest::DriverCorpus::names(corpusDir())) {
            const replaytest::DriverSequence s = replaytest::DriverCorpus::load(corpusDir(), name);
            if (s.heldOut != heldOut) continue;
            const alloc::RecordedTrace none;
            alloc::DriverPlacementModel model(none);
            const replaytest::PlacementScore score = replaytest::DriverCorpus::score(s, model);
            qInfo("%s: %d placements, %d at the driver's relative address, same-size order %d of %d", name.c_str(),
                  score.placements, score.exact, score.orderRight, score.orderDecisions);
            QVERIFY2(score.exact == score.placements - 1, name.c_str());
            ++sequences;
            total.placements += score.placements;
            total.exact += score.exact;
            total.orderDecisions += score.orderDecisions;
            total.orderRight += score.orderRight;
        }
        QCOMPARE(total.placements, placements);
        QCOMPARE(total.exact, placements - sequences);
        QCOMPARE(total.orderDecisions, orderDecisions);
        QCOMPARE(total.orderRight, orderDecisions);
    }
};

QTEST_GUILESS_MAIN(TestDriverPlacementCorpus)
#include "TestDriverPlacementCorpus.moc"
