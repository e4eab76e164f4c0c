// Histories that start mid-run: `_record_memory_history(max_entries=3000)` snapshots whose ring
// buffer overflowed, and an `enabled="state"` snapshot (one stray entry), recorded with torch 2.11
// on an H100 (tests/data/pools). Replayed under their own config, each must end with PyTorch's
// final state: every `.current` statistic, every statistic that does not count only the recorded
// window, the final layout and every recorded segment event. And on full traces: cutting off the
// first entries (an artificial ring buffer) must not change the final state, and a full trace
// must never look truncated.
#include <QDir>
#include <QtTest>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "ReplayTestData.h"
#include "allocator/core/CachingAllocator.h"
#include "allocator/core/InvariantChecker.h"
#include "allocator/config/ConfigParser.h"
#include "allocator/core/EventSink.h"
#include "allocator/core/ProgramRunner.h"
#include "allocator/core/RestorePlan.h"
#include "allocator/device/SimulatedDevice.h"
#include "allocator/replay/HistoryWindow.h"
#include "allocator/replay/ProgramFromTrace.h"
#include "allocator/replay/TraceReplayer.h"
#include "allocator/workloads/WorkloadRegistry.h"
#include "storage/import/TraceImport.h"

using namespace allocscope;

namespace {

QString poolsDir() { return QString::fromLocal8Bit(qgetenv("ALLOCSCOPE_TEST_DATA")) + "/pools"; }

alloc::RecordedTrace load(const QString& path) {
    auto traces = storage::importTraceFile(path.toStdString());
    if (traces.size() != 1) qFatal("expected one device in %s", qPrintable(path));
    return std::move(traces.front());
}

std::map<std::string, std::int64_t> flat(const alloc::DeviceStats& stats) {
    std::map<std::string, std::int64_t> out;
    for (const auto& [key, value] : stats.flatten()) out[key] = value;
    return out;
}

// Every key of `want` that `select` accepts, compared with `got`; one line per difference.
template <typename Select>
QString diffKeys(const std::map<std::string, std::int64_t>& want, const alloc::DeviceStats& got, Select select) {
    QStringList lines;
    const auto have = flat(got);
    for (const auto& [key, value] : want) {
        if (!select(key)) continue;
        const auto it = have.find(key);
        if (it == have.end() || it->second != value) {
            lines << QString("%1: want %2, replay %3")
                         .arg(QString::fromStdString(key))
                         .arg(value)
                         .arg(it == have.end() ? QStringLiteral("missing") : QString::number(it->second));
        }
    }
    return lines.join("\n");
}

bool isCurrent(const std::string& key) { return key.ends_with(".current"); }

// Segments and blocks, field by field ("" = the same).
std::string diffLayout(const std::vector<alloc::SegmentInfo>& want, const std::vector<alloc::SegmentInfo>& got) {
    std::ostringstream out;
    if (want.size() != got.size()) {
        out << want.size() << " segments wanted, " << got.size() << " found";
        return out.str();
    }
    for (std::size_t i = 0; i < want.size(); ++i) {
        const alloc::SegmentInfo& w = want[i];
        const alloc::SegmentInfo& g = got[i];
        if (w.address != g.address || w.totalSize != g.totalSize || w.stream != g.stream || w.pool != g.pool ||
            w.isExpandable != g.isExpandable || w.blocks.size() != g.blocks.size()) {
            out << "segment " << i << " at 0x" << std::hex << w.address << " differs (found 0x" << g.address << ")";
            return out.str();
        }
        for (std::size_t b = 0; b < w.blocks.size(); ++b) {
            const alloc::BlockInfo& wb = w.blocks[b];
            const alloc::BlockInfo& gb = g.blocks[b];
            if (wb.address != gb.address || wb.size != gb.size || wb.requestedSize != gb.requestedSize || wb.state != gb.state) {
                out << "block 0x" << std::hex << wb.address << std::dec << " (" << wb.size << " B, requested "
                    << wb.requestedSize << ", " << alloc::blockStateName(wb.state) << ") found as 0x" << std::hex
                    << gb.address << std::dec << " (" << gb.size << " B, requested " << gb.requestedSize << ", "
                    << alloc::blockStateName(gb.state) << ")";
                return out.str();
            }
        }
    }
    return "";
}

// The last entries of `trace` from `first` on: what a ring buffer that overflowed keeps.
alloc::RecordedTrace lastEntries(const alloc::RecordedTrace& trace, std::size_t first) {
    alloc::RecordedTrace cut = trace;
    cut.entries.erase(cut.entries.begin(), cut.entries.begin() + static_cast<std::ptrdiff_t>(first));
    cut.phases.clear();
    for (const alloc::PhaseMark& mark : trace.phases) {
        if (mark.entryIndex < first) continue;  // a ring buffer keeps no annotation older than it
        alloc::PhaseMark moved = mark;
        moved.entryIndex -= first;
        cut.phases.push_back(moved);
    }
    return cut;
}

// Records what the allocator did as PyTorch's trace would (no snapshot entries).
class TraceSink final : public alloc::EventSink {
public:
    void onEvent(const alloc::Event& e) override {
        if (e.action == alloc::EventAction::Snapshot) return;
        alloc::RecordedEntry entry;
        entry.action = e.action;
        entry.address = e.address;  // Oom: the device's free bytes, in both
        entry.size = e.size;
        entry.streamIndex = trace.streamIndex(e.stream);
        trace.entries.push_back(entry);
    }
    alloc::RecordedTrace trace;
};

constexpr std::uint64_t kTotal = 85'017'493'504ull;

// A full trace of random-mix (three streams, record_stream frees that stay pending, small and
// large sizes) with an empty_cache() every 300 ops, stopped before its final cleanup, recorded
// from our own allocator under `conf`: every undo rule meets its case, and the truth is known.
alloc::RecordedTrace syntheticTrace(const std::string& conf) {
    const alloc::Workload& workload = alloc::WorkloadRegistry::instance().get("random-mix");
    const alloc::GeneratedProgram generated = workload.generate(
        workload.resolve({{"events", "1500"}, {"max_mb", "96"}, {"cross_stream", "0.25"}, {"small_fraction", "0.5"}}), 7);
    alloc::Program program;
    program.labels = generated.program.labels;
    const std::size_t keep = generated.program.ops.size() * 3 / 4;
    for (std::size_t i = 0; i < keep; ++i) {
        program.ops.push_back(generated.program.ops[i]);
        if (i % 300 == 299) program.ops.push_back(alloc::Op::simple(alloc::OpKind::EmptyCache));
    }
    TraceSink sink;
    alloc::SimulatedDevice device(kTotal, 0);
    alloc::CachingAllocator allocator(alloc::parseConfig(conf).config, device, &sink);
    alloc::ProgramRunner runner(allocator);
    const alloc::ProgramResult run = runner.run(program);
    if (!run.ok() || !run.ooms.empty()) qFatal("the synthetic program did not run cleanly");
    alloc::RecordedTrace trace = std::move(sink.trace);
    trace.settings = conf;
    trace.finalSegments = allocator.segments();
    return trace;
}

}  // namespace

class TestTruncatedHistory : public QObject {
    Q_OBJECT

private slots:
    void windowOnlyKeys() {
        const std::vector<std::string> keys = alloc::HistoryWindow::windowOnlyKeys();
        QVERIFY(!keys.empty());
        const std::set<std::string> set(keys.begin(), keys.end());
        QVERIFY(set.count("num_alloc_retries") == 1);
        QVERIFY(set.count("allocated_bytes.all.peak") == 1);
        QVERIFY(set.count("segment.large_pool.allocated") == 1);
        for (const std::string& key : keys) QVERIFY2(!isCurrent(key), key.c_str());
        QVERIFY(set.count("max_split_size") == 0);
    }

    void recorded_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<bool>("noHistory");
        QTest::newRow("ringbuf_train__default") << "ringbuf_train__default" << false;
        QTest::newRow("ringbuf_train__expandable") << "ringbuf_train__expandable" << false;
        QTest::newRow("stateonly_train__default") << "stateonly_train__default" << true;
    }
    // Replayed under its own config and total memory, a truncated recording ends in PyTorch's state.
    void recorded() {
        QFETCH(QString, name);
        QFETCH(bool, noHistory);
        const replaytest::GroundTruth truth = replaytest::loadGroundTruth(name, poolsDir());
        QVERIFY2(truth.loaded, "cannot read the ground-truth JSON");
        const alloc::RecordedTrace trace = load(poolsDir() + "/" + name + ".pickle");
        const alloc::ReplayResult result = alloc::TraceReplayer::replay(trace, replaytest::optionsFor(truth));
        QVERIFY2(result.truncation.has_value(), "the history was not seen to start mid-run");
        QCOMPARE(result.truncation->noHistory, noHistory);
        QVERIFY(result.truncation->blocks > 0 && result.truncation->bytes > 0);
        QVERIFY(result.truncation->restoredEvents > 0);
        QVERIFY2(result.exact(), qPrintable(replaytest::describeInexact(result)));
        QCOMPARE(QString::fromStdString(diffLayout(*trace.finalSegments, result.segments)), QString());

        const QString currents = diffKeys(truth.stats, result.stats, isCurrent);
        QVERIFY2(currents.isEmpty(), qPrintable(currents));
        const std::vector<std::string> window = alloc::HistoryWindow::windowOnlyKeys();
        const QString others = diffKeys(truth.stats, result.stats, [&](const std::string& key) {
            return std::find(window.begin(), window.end(), key) == window.end();
        });
        QVERIFY2(others.isEmpty(), qPrintable(others));
        QCOMPARE(truth.stats.size(), std::size_t{122});
        if (noHistory) {
            // The stray entry is the completion of a 16 MiB free: that block was pending before it.
            QCOMPARE(result.truncation->blocks, std::uint64_t{4});
            QCOMPARE(result.truncation->bytes, std::uint64_t{68'157'440 + 16'777'216});
        }
    }

    // The lone entry of a state-only snapshot that does not fit its final state (here: the
    // completion of a free at an address no segment holds) still restores that state.
    void strayEntryThatDoesNotFit() {
        const replaytest::GroundTruth truth = replaytest::loadGroundTruth("stateonly_train__default", poolsDir());
        alloc::RecordedTrace trace = load(poolsDir() + "/stateonly_train__default.pickle");
        trace.entries.front().address = 0x10;
        const alloc::ReplayResult result = alloc::TraceReplayer::replay(trace, replaytest::optionsFor(truth));
        QVERIFY(result.truncation && result.truncation->noHistory);
        QVERIFY2(!result.layoutDifference, result.layoutDifference ? result.layoutDifference->c_str() : "");
        QCOMPARE(result.notes.size(), std::size_t{1});  // the entry it could not apply
        const QString currents = diffKeys(truth.stats, result.stats, isCurrent);
        QVERIFY2(currents.isEmpty(), qPrintable(currents));
    }

    // A state that cannot be rebuilt (here: a device smaller than what was reserved) does not
    // stop the replay: it starts from an empty allocator and says why.
    void unrestorableStateIsANote() {
        const replaytest::GroundTruth truth = replaytest::loadGroundTruth("ringbuf_train__default", poolsDir());
        const alloc::RecordedTrace trace = load(poolsDir() + "/ringbuf_train__default.pickle");
        alloc::ReplayOptions options = replaytest::optionsFor(truth);
        options.totalMemory = 1ull << 30;
        options.otherMemory = 0;
        options.continueAfterOom = true;
        const alloc::ReplayResult result = alloc::TraceReplayer::replay(trace, options);
        QVERIFY(!result.truncation);
        QVERIFY(!result.notes.empty());
        QVERIFY2(QString::fromStdString(result.notes.front()).contains("could not be rebuilt"), result.notes.front().c_str());
    }

    // restoreSegments alone: the snapshot's final segments come back exactly, with PyTorch's
    // `.current` statistics, and the allocator's own invariants hold.
    void restoreFinalState_data() { recorded_data(); }
    void restoreFinalState() {
        QFETCH(QString, name);
        const replaytest::GroundTruth truth = replaytest::loadGroundTruth(name, poolsDir());
        const alloc::RecordedTrace trace = load(poolsDir() + "/" + name + ".pickle");
        const alloc::ReplayOptions options = replaytest::optionsFor(truth);
        alloc::SimulatedDevice device(options.totalMemory, options.otherMemory);
        const std::vector<alloc::RestoredSpace> plan = alloc::planRestore(*trace.finalSegments, options.config, options.totalMemory);
        std::size_t next = 0;
        device.setAddressOracle([&](const alloc::PlacementRequest&) { return std::optional(plan.at(next++).address); });
        alloc::InvariantChecker checker(options.config.maxSplitSize);
        alloc::CachingAllocator allocator(options.config, device, &checker);
        allocator.restoreSegments(*trace.finalSegments);
        QCOMPARE(next, plan.size());
        QCOMPARE(QString::fromStdString(diffLayout(*trace.finalSegments, allocator.segments())), QString());
        const QString currents = diffKeys(truth.stats, allocator.stats(), isCurrent);
        QVERIFY2(currents.isEmpty(), qPrintable(currents));
        QCOMPARE(allocator.stats().allocated_bytes[alloc::kAggregate].allocated, std::int64_t{0});
        // The checker counted the restore events as allocations; the restored totals are 0, as
        // after reset_accumulated_memory_stats().
        checker.noteResetAccumulated(allocator);
        QCOMPARE(QString::fromStdString(checker.check(allocator)), QString());
        bool refused = false;
        try {
            allocator.restoreSegments(*trace.finalSegments);
        } catch (const std::logic_error&) {
            refused = true;  // only a fresh allocator can be restored
        }
        QVERIFY(refused);
    }

    // The program of a truncated trace (what compare and recommend re-run) starts by allocating
    // the restored live tensors, so the recorded frees find them.
    void programStartsWithLiveTensors() {
        const replaytest::GroundTruth truth = replaytest::loadGroundTruth("ringbuf_train__default", poolsDir());
        const alloc::RecordedTrace trace = load(poolsDir() + "/ringbuf_train__default.pickle");
        alloc::ProgramFromTraceOptions options;
        options.totalMemory = truth.totalMemory;
        options.otherMemory = replaytest::optionsFor(truth).otherMemory;
        const alloc::Program program = alloc::programFromTrace(trace, options);
        const alloc::HistoryWindow window(trace, {});
        QVERIFY(window.truncated());
        for (std::uint64_t i = 0; i < window.liveBlocks(); ++i) QCOMPARE(program.ops.at(i).kind, alloc::OpKind::Alloc);
        alloc::SimulatedDevice device(options.totalMemory, options.otherMemory);
        alloc::CachingAllocator allocator(alloc::AllocatorConfig{}, device);
        alloc::ProgramRunner runner(allocator);
        const alloc::ProgramResult run = runner.run(program);
        QVERIFY2(run.ok(), run.error ? run.error->message.c_str() : "");
        QCOMPARE(allocator.stats().allocated_bytes[alloc::kAggregate].current,
                 truth.stats.at("allocated_bytes.all.current"));
    }

    // A full recording starts from nothing: the rewind must reach an empty allocator (a wrong
    // undo rule shows here as a problem or a leftover state), so its replay is unchanged.
    void fullTracesAreNotTruncated_data() {
        QTest::addColumn<QString>("path");
        for (const QString& name : replaytest::traceNames()) {
            QTest::newRow(qPrintable(name)) << replaytest::tracesDir() + "/" + name + ".pickle";
        }
        const QString replayDir = QString::fromLocal8Bit(qgetenv("ALLOCSCOPE_TEST_DATA")) + "/replay";
        for (const QString& f : QDir(replayDir).entryList({"*.pickle"}, QDir::Files, QDir::Name)) {
            QTest::newRow(qPrintable(f)) << replayDir + "/" + f;
        }
        // Private pools (CUDA graphs, MemPools, torch.compile), recorded whole. (two_devices holds
        // a state-only device: test_truncated_import covers it.)
        for (const QString& f : QDir(poolsDir()).entryList({"*.pickle"}, QDir::Files, QDir::Name)) {
            const bool partial = f.startsWith("ringbuf_") || f.startsWith("stateonly_") || f.startsWith("two_devices");
            if (!partial) QTest::newRow(qPrintable(f)) << poolsDir() + "/" + f;
        }
    }
    void fullTracesAreNotTruncated() {
        QFETCH(QString, path);
        const alloc::RecordedTrace trace = load(path);
        const alloc::HistoryWindow window(trace, {});
        QCOMPARE(QString::fromStdString(window.problem()), QString());
        QVERIFY(!window.truncated());
        QVERIFY(window.initialSegments().empty());
    }

    // An artificial ring buffer: the last entries of a full trace, replayed from the state the
    // rewind rebuilds, end exactly where the full replay ends (layout and `.current` stats).
    void artificialRingBuffer_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<double>("cut");  // share of the entries cut off
        for (const char* name : {"train_gpt__default", "train_gpt__expandable", "train_gpt__msplit128",
                                 "frag101__default", "frag101__rup4", "kv_growth_limited__default"}) {
            for (const double cut : {0.0005, 0.25, 0.5, 0.9, 1.0}) {
                QTest::newRow(qPrintable(QString("%1 %2").arg(name).arg(cut))) << QString(name) << cut;
            }
        }
    }
    void artificialRingBuffer() {
        QFETCH(QString, name);
        QFETCH(double, cut);
        const replaytest::GroundTruth truth = replaytest::loadGroundTruth(name);
        const alloc::RecordedTrace full = load(replaytest::tracesDir() + "/" + name + ".pickle");
        const alloc::ReplayOptions options = replaytest::optionsFor(truth);
        const alloc::ReplayResult whole = alloc::TraceReplayer::replay(full, options);
        QVERIFY(whole.exact());
        QVERIFY(!whole.truncation);

        const std::size_t first = std::max<std::size_t>(1, static_cast<std::size_t>(cut * static_cast<double>(full.entries.size())));
        const alloc::RecordedTrace window = lastEntries(full, std::min(first, full.entries.size()));
        const alloc::ReplayResult result = alloc::TraceReplayer::replay(window, options);
        QVERIFY2(result.truncation.has_value(), "the cut trace was not seen to start mid-run");
        QVERIFY2(result.exact(), qPrintable(replaytest::describeInexact(result)));
        QCOMPARE(QString::fromStdString(diffLayout(whole.segments, result.segments)), QString());
        const QString currents = diffKeys(flat(whole.stats), result.stats, isCurrent);
        QVERIFY2(currents.isEmpty(), qPrintable(currents));
    }

    // The same on traces of our own allocator, cut at many points: pending frees at the cut,
    // streams, explicit empty_cache() (segment_free / segment_unmap to undo), oversize blocks.
    void syntheticRingBuffer_data() {
        QTest::addColumn<QString>("conf");
        for (const char* conf : {"", "expandable_segments:True", "max_split_size_mb:40", "roundup_power2_divisions:4"}) {
            QTest::newRow(*conf ? conf : "default") << QString(conf);
        }
    }
    void syntheticRingBuffer() {
        QFETCH(QString, conf);
        const alloc::RecordedTrace full = syntheticTrace(conf.toStdString());
        alloc::ReplayOptions options;
        options.config = alloc::parseConfig(conf.toStdString()).config;
        options.totalMemory = kTotal;
        options.otherMemory = 0;
        const alloc::ReplayResult whole = alloc::TraceReplayer::replay(full, options);
        QVERIFY2(whole.exact(), qPrintable(replaytest::describeInexact(whole)));
        QVERIFY(!whole.truncation);
        int cuts = 0;
        for (std::size_t first = 1; first < full.entries.size(); first += 1 + first / 3, ++cuts) {
            const alloc::ReplayResult result = alloc::TraceReplayer::replay(lastEntries(full, first), options);
            const QString where = QString("cut before entry %1 of %2: ").arg(first).arg(full.entries.size());
            QVERIFY2(result.truncation.has_value(), qPrintable(where + "not seen as truncated"));
            QVERIFY2(result.exact(), qPrintable(where + replaytest::describeInexact(result)));
            const std::string layout = diffLayout(whole.segments, result.segments);
            QVERIFY2(layout.empty(), qPrintable(where + QString::fromStdString(layout)));
            const QString currents = diffKeys(flat(whole.stats), result.stats, isCurrent);
            QVERIFY2(currents.isEmpty(), qPrintable(where + currents));
        }
        QVERIFY(cuts > 10);
    }

    // A large block keeps a tail of at most 1 MiB unsplit (should_split). Before the window, P
    // (9.5 MiB asked) got a 10 MiB free block whole; C (8 MiB) lies right after it, G after C;
    // in segment Y, D (8 MiB) and E. The window frees C and D, allocates 8 MiB, which PyTorch put
    // at C's address (two free blocks of exactly 8 MiB: the lower address wins), then frees it,
    // P, G and E. Undoing P's free cannot see P's tail (everything after P is free then); only
    // undoing the free of the 8 MiB block shows a free 0.5 MiB piece between P and it, too short
    // to be a block of its own: P's tail. Without it, C's free block is 8.5 MiB and the 8 MiB
    // request goes to Y instead (the Wedsonlin field recording, trace entry 256).
    void unsplitTailOfALiveBlock() {
        constexpr std::uint64_t MiB = 1024 * 1024;
        const std::uint64_t x = 0x7000000000ull;
        const std::uint64_t y = 0x7100000000ull;
        alloc::RecordedTrace trace;
        trace.settings = "";
        auto add = [&](alloc::EventAction action, std::uint64_t address, std::uint64_t size) {
            alloc::RecordedEntry e;
            e.action = action;
            e.address = address;
            e.size = size;
            trace.entries.push_back(e);
        };
        auto free = [&](std::uint64_t address, std::uint64_t size) {
            add(alloc::EventAction::FreeRequested, address, size);
            add(alloc::EventAction::FreeCompleted, address, size);
        };
        free(x + 10 * MiB, 8 * MiB);  // C
        free(y, 8 * MiB);             // D
        add(alloc::EventAction::Alloc, x + 10 * MiB, 8 * MiB);
        free(x + 10 * MiB, 8 * MiB);
        free(x, 9 * MiB + MiB / 2);   // P
        free(x + 18 * MiB, 4 * MiB);  // G
        free(y + 8 * MiB, 4 * MiB);   // E
        auto freeSegment = [](std::uint64_t address, std::uint64_t size) {
            alloc::SegmentInfo segment;
            segment.address = address;
            segment.totalSize = size;
            segment.blocks.push_back(alloc::BlockInfo{address, size, 4 * MiB, alloc::BlockState::Inactive, 0});
            return segment;
        };
        trace.finalSegments = std::vector<alloc::SegmentInfo>{freeSegment(x, 40 * MiB), freeSegment(y, 20 * MiB)};

        const alloc::HistoryWindow window(trace, {});
        QVERIFY(window.truncated());
        const std::vector<alloc::SegmentInfo>& before = window.initialSegments();
        QCOMPARE(before.size(), std::size_t{2});
        QCOMPARE(before[0].blocks.at(0).address, x);
        QCOMPARE(before[0].blocks.at(0).size, 10 * MiB);  // P with its tail
        QCOMPARE(before[0].blocks.at(1).address, x + 10 * MiB);

        alloc::ReplayOptions options;
        const alloc::ReplayResult result = alloc::TraceReplayer::replay(trace, options);
        QVERIFY2(result.exact(), result.divergence ? result.divergence->what.c_str() : "layout");
    }

    // The field recording that showed it (../shared/field-snapshots, skipped where absent): a
    // training step recorded after the model was loaded, exact from the rebuilt state.
    void fieldRecording() {
        const QString path = replaytest::fieldSnapshot("Wedsonlin__assignment2-systems__medium_512_training_memory_snapshot.pickle");
        if (path.isEmpty()) QSKIP("../shared/field-snapshots is not here");
        const alloc::RecordedTrace trace = load(path);
        alloc::ReplayOptions options;
        options.config = alloc::parseConfig(trace.settings.value_or("")).config;
        const alloc::ReplayResult result = alloc::TraceReplayer::replay(trace, options);
        QVERIFY(result.truncation.has_value());
        QVERIFY2(result.exact(), result.divergence ? result.divergence->what.c_str() : "layout");
    }
};

QTEST_GUILESS_MAIN(TestTruncatedHistory)
#include "TestTruncatedHistory.moc"
