// Issue 35: the memory limit is inferred from a recording's OOM (LimitInference), and the OOM
// answer (OomAnalyzer) says what failed, who held the memory and which config avoids it. The
// recordings are made here on a SimulatedDevice under a known limit (OomRecording), so the
// truth is known: it must lie in the inferred interval, the replay at the chosen limit must be
// exact with no flags, and each what-if row's OOM / no OOM must equal a direct run of that
// config at the true limit.
#include <QTemporaryDir>
#include <QtTest>

#include "OomRecording.h"
#include "ReplayTestData.h"
#include "allocator/compare/ComparisonEngine.h"
#include "allocator/compare/OomAnalyzer.h"
#include "allocator/config/ConfigParser.h"
#include "allocator/replay/LimitInference.h"
#include "allocator/replay/ProgramFromTrace.h"
#include "allocator/replay/TraceReplayer.h"
#include "allocator/workloads/ProgramBuilder.h"
#include "storage/import/TraceFile.h"

using namespace allocscope;

namespace {

constexpr std::uint64_t kMiB = 1ull << 20;
constexpr std::uint64_t kH100 = 85'017'493'504ull;
constexpr std::uint64_t kContext = 552'402'944ull;

alloc::MemoryLimit inferFrom(const alloc::RecordedTrace& trace) {
    alloc::ReplayOptions base;
    base.config = alloc::parseConfig(trace.settings.value_or("")).config;
    return alloc::LimitInference::infer(trace, base, alloc::LimitDevice{});
}

alloc::ReplayResult replayAt(const alloc::RecordedTrace& trace, const alloc::MemoryLimit& limit) {
    alloc::ReplayOptions options;
    options.config = alloc::parseConfig(trace.settings.value_or("")).config;
    alloc::LimitInference::apply(limit, options);
    return alloc::TraceReplayer::replay(trace, options);
}

alloc::OomAnswer answerFor(const alloc::RecordedTrace& trace, const alloc::MemoryLimit& limit) {
    const alloc::Program program = alloc::programFromTrace(trace, {std::nullopt, 1ull << 50, limit.otherMemory});
    return alloc::OomAnalyzer::analyze(trace, alloc::parseConfig(trace.settings.value_or("")).config, limit, program);
}

// The config's run of the hand-made program itself at the true limit: what "PyTorch's real run"
// of that config is here.
bool truthOoms(const oomtest::Shape& shape, const std::string& config, const oomtest::Limit& limit) {
    alloc::StackTable stacks;
    const alloc::Program program = oomtest::holesProgram(shape, stacks);
    alloc::CompareDevice device;
    device.name = "truth";
    device.totalMemory = limit.totalMemory;
    device.otherMemory = limit.otherMemory;
    device.memoryFraction = limit.memoryFraction;
    return alloc::ComparisonEngine::runOne(program, {config, alloc::parseConfig(config == "default" ? "" : config).config}, device).oom();
}

// A program whose garbage collection (threshold 0.6) decides twice inside the OOM's interval:
// a 100 MiB tensor is freed and stays cached; with 602 MiB reserved the next request must find
// no gc (0.6 x limit >= 602 MiB), with 752 MiB the one after must (0.6 x limit < 752 MiB: the
// cached segment is released); then 600 MiB more fail (852 + 600 > limit). The recording is
// reproduced only between the two gc thresholds, ends that are no whole granules of limit. A
// cached small segment, which gc keeps, tells the gc apart from an explicit empty_cache().
alloc::Program gcProgram(alloc::StackTable& stacks) {
    alloc::ProgramBuilder b("train.py");
    const std::uint32_t s = b.stack("forward", 20);
    b.free(b.alloc(4096, s, 0));
    b.free(b.alloc(100 * kMiB, s, 0));
    b.alloc(500 * kMiB, s, 0);
    b.alloc(150 * kMiB, s, 0);
    b.alloc(200 * kMiB, s, 0);
    b.alloc(600 * kMiB, s, 0);
    alloc::GeneratedProgram generated = b.take();
    stacks = std::move(generated.stacks);
    return std::move(generated.program);
}

// The smallest limit whose gc threshold (size_t)(0.6 x limit) reaches `bytes`.
std::uint64_t gcLimitFor(std::uint64_t bytes) {
    std::uint64_t limit = static_cast<std::uint64_t>(static_cast<double>(bytes) / 0.6) - 4;
    while (static_cast<std::uint64_t>(0.6 * static_cast<double>(limit)) < bytes) ++limit;
    return limit;
}

}  // namespace

class TestLimitInference : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

    alloc::RecordedTrace recorded(const oomtest::Shape& shape, const oomtest::Limit& limit, const char* name,
                                  oomtest::Recording* out = nullptr) {
        const std::string path = dir_.filePath(name).toStdString();
        oomtest::Recording r = oomtest::record(shape, "", limit, path);
        if (!r.oomOp) qFatal("the recording did not OOM");
        if (out) *out = std::move(r);
        storage::TraceFile file = storage::TraceFile::read(path);
        return std::move(file.traces.front());
    }

private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    // A memory fraction stopped the allocator: device_free is far above the request.
    void fractionLimitLiesInTheInterval() {
        const oomtest::Shape shape;  // 3 x (200 | 180 hole | 200), then 256 MiB
        const oomtest::Limit truth{kH100, kContext, 0.023};
        oomtest::Recording rec;
        const alloc::RecordedTrace trace = recorded(shape, truth, "fraction.pickle", &rec);
        const alloc::MemoryLimit limit = inferFrom(trace);
        QCOMPARE(int(limit.source), int(alloc::MemoryLimit::Source::Inferred));
        QCOMPARE(int(limit.cause), int(alloc::MemoryLimit::Cause::MemoryFraction));
        // Every recorded success fits (peak 3 x 580 MiB); the 256 MiB more does not.
        QCOMPARE(limit.low, 1740 * kMiB);
        QCOMPARE(limit.high, 1996 * kMiB - 1);
        QVERIFY(limit.low <= truth.bytes() && truth.bytes() <= limit.high);
        QVERIFY(limit.low <= limit.bytes && limit.bytes <= limit.high);
        QVERIFY(limit.memoryFraction.has_value());
        QCOMPARE(limit.oomOp, rec.oomOp);
        const QString line = QString::fromStdString(limit.describe());
        QVERIFY2(line.startsWith("limit inferred from the OOM at op " + QString::number(*rec.oomOp) + ": "), qPrintable(line));
        QVERIFY2(line.contains("between 1.70 GiB and 1.95 GiB"), qPrintable(line));
        QVERIFY2(line.contains("memory fraction"), qPrintable(line));
        // Exact at the chosen limit and at both ends; not one granule outside either end.
        for (const std::uint64_t at : {limit.bytes, limit.low, limit.high}) {
            const alloc::ReplayResult r = replayAt(trace, limit.at(at));
            QVERIFY2(r.exact(), qPrintable(replaytest::describeInexact(r)));
        }
        QVERIFY(!replayAt(trace, limit.at(limit.low - alloc::LimitInference::kGranule)).exact());
        QVERIFY(!replayAt(trace, limit.at(limit.high + 1)).exact());
    }

    // Under garbage_collection_threshold the interval is where the recorded gc decisions are
    // reproduced, to the byte: a probe above it keeps the segment the recording's gc released
    // (the limit is too large, although the OOM still fails there), one below releases it early.
    void gcThresholdBoundsTheInterval() {
        const std::string config = "garbage_collection_threshold:0.6";
        const oomtest::Limit truth{kH100, kContext, 0.0135};  // 1094.6 MiB
        alloc::StackTable stacks;
        alloc::Program program = gcProgram(stacks);
        const std::string path = dir_.filePath("gc.pickle").toStdString();
        const oomtest::Recording rec = oomtest::recordProgram(std::move(program), std::move(stacks), config, truth, path);
        QCOMPARE(rec.oomOp, std::optional<std::uint64_t>(7));
        storage::TraceFile file = storage::TraceFile::read(path);
        const alloc::RecordedTrace& trace = file.traces.front();
        const alloc::MemoryLimit limit = inferFrom(trace);
        QCOMPARE(int(limit.source), int(alloc::MemoryLimit::Source::Inferred));
        QVERIFY2(limit.pick.find("bounded by the OOMs alone") == std::string::npos, limit.pick.c_str());
        QCOMPARE(limit.low, gcLimitFor(602 * kMiB));
        QVERIFY(limit.low <= truth.bytes() && truth.bytes() <= limit.high);
        QVERIFY(limit.low <= limit.bytes && limit.bytes <= limit.high);
        // At the chosen limit the gc alone explains the recording: no guessed private pool, no
        // inferred empty_cache().
        const alloc::ReplayResult chosen = replayAt(trace, limit);
        QVERIFY2(chosen.exact(), qPrintable(replaytest::describeInexact(chosen)));
        QVERIFY(chosen.emptyCacheSteps.empty() && chosen.poolRevisions == 0);
        // Below the low end the replay's gc releases the cached segment one request early: the
        // replay was under more memory pressure than the recording.
        alloc::ReplayOptions fixed;
        fixed.config = alloc::parseConfig(config).config;
        fixed.poolAssignments.emplace();  // the default pool only: no pool guesses
        alloc::LimitInference::apply(limit.at(limit.low - 1), fixed);
        const alloc::ReplayResult below = alloc::TraceReplayer::replay(trace, fixed);
        QVERIFY(below.divergence && below.divergence->pressure == alloc::MemoryPressure::Higher);
        // Above the second threshold the replay keeps the segment the recording's gc released:
        // less pressure. (With pool guesses allowed that release could also be read as a MemPool
        // of its own, destroyed there: the trace cannot tell, so the interval's high
        // end is the OOM's.)
        alloc::LimitInference::apply(limit.at(gcLimitFor(752 * kMiB)), fixed);
        const alloc::ReplayResult above = alloc::TraceReplayer::replay(trace, fixed);
        QVERIFY(above.divergence && above.divergence->pressure == alloc::MemoryPressure::Lower);
    }

    // The device itself was full: the limit is the reserved bytes at the failure + device_free,
    // exactly the room the device left.
    void fullDeviceLimitIsExact() {
        const oomtest::Shape shape{3, 200, 60, 256};
        const oomtest::Limit truth{4096 * kMiB, 4096 * kMiB - 1500 * kMiB, std::nullopt};
        const alloc::RecordedTrace trace = recorded(shape, truth, "full.pickle");
        const alloc::MemoryLimit limit = inferFrom(trace);
        QCOMPARE(int(limit.source), int(alloc::MemoryLimit::Source::Inferred));
        QCOMPARE(int(limit.cause), int(alloc::MemoryLimit::Cause::DeviceFull));
        QCOMPARE(limit.low, 1380 * kMiB);
        QCOMPARE(limit.high, 1636 * kMiB - 1);
        QCOMPARE(limit.bytes, truth.bytes());
        QVERIFY(!limit.memoryFraction);
        const alloc::ReplayResult r = replayAt(trace, limit);
        QVERIFY2(r.exact(), qPrintable(replaytest::describeInexact(r)));
        QCOMPARE(r.recordedOoms.size(), std::size_t{1});
        QVERIFY(r.recordedOoms.front().reproduced);
        // The driver's free bytes at the failure are the recorded ones.
        QCOMPARE(r.recordedOoms.front().oom.deviceFree, trace.entries[*alloc::OomAnalyzer::firstOom(trace)].address);
    }

    // Fragmentation: 540 MiB sit free in holes of 180 MiB. Expandable segments unmap the holes
    // and avoid the OOM at every limit in the interval; the defaults OOM at every one.
    void answerNamesFragmentationAndExpandable() {
        const oomtest::Shape shape;
        const oomtest::Limit truth{kH100, kContext, 0.023};
        const alloc::RecordedTrace trace = recorded(shape, truth, "fraction2.pickle");
        const alloc::OomAnswer a = answerFor(trace, inferFrom(trace));
        QVERIFY2(QString::fromStdString(a.headline).startsWith("yes: expandable_segments:True would have avoided this OOM"),
                 a.headline.c_str());
        QVERIFY2(QString::fromStdString(a.headline).contains("at any limit in the inferred interval"), a.headline.c_str());
        QCOMPARE(a.requested, 256 * kMiB);
        QCOMPARE(a.reserved, 1740 * kMiB);
        QCOMPARE(a.allocated, 1200 * kMiB);
        QCOMPARE(a.cachedFree, 540 * kMiB);
        QCOMPARE(a.largestFree, 180 * kMiB);
        QVERIFY(a.fragmented);
        QCOMPARE(a.holderCount, std::size_t{6});
        QCOMPARE(a.holders.front().size, 200 * kMiB);
        QVERIFY(!a.holders.front().frames.empty());
        QVERIFY2(QString::fromStdString(a.holders.front().frames.front()).contains("activation"), a.holders.front().frames.front().c_str());
        QVERIFY2(QString::fromStdString(a.pytorchMessage).startsWith("CUDA out of memory. Tried to allocate 256.00 MiB."),
                 a.pytorchMessage.c_str());
        QVERIFY(a.whatIf.size() > 10);
        QVERIFY(a.whatIf.front().recorded);
        QVERIFY(a.whatIf.front().oom);
        QCOMPARE(a.whatIf.front().oomOp, std::optional<std::uint64_t>(a.opIndex));
        for (const alloc::OomWhatIfRow& row : a.whatIf) {
            if (row.config == "backend:cudaMallocAsync") continue;  // a fitted model, not the allocator
            QVERIFY2(row.oom == truthOoms(shape, row.config, truth), row.config.c_str());
            if (row.config == "default") QVERIFY(row.holdsOverInterval() && row.oom);
            if (!row.holdsOverInterval()) {
                // A threshold inside the interval: OOM one granule below it, none at it.
                QVERIFY2(row.threshold && *row.threshold > a.limit.low && *row.threshold <= a.limit.high, row.config.c_str());
                const oomtest::Limit below{kH100, kContext, (double(*row.threshold - alloc::LimitInference::kGranule) + 0.5) / kH100};
                const oomtest::Limit at{kH100, kContext, (double(*row.threshold) + 0.5) / kH100};
                QVERIFY2(truthOoms(shape, row.config, below) && !truthOoms(shape, row.config, at), row.config.c_str());
            }
            if (row.config == "expandable_segments:True") {
                QVERIFY(!row.oom);
                QCOMPARE(row.verdict, std::string("no OOM at any limit in the interval"));
                QVERIFY(row.headroom > 0);
            }
        }
    }

    // Holes too small to add up to the request: expandable segments avoid it only where the
    // limit leaves room for the kept tensors + the request's pages (3 x 400 + 260 MiB).
    void verdictThatDependsOnTheLimit() {
        const oomtest::Shape shape{3, 200, 60, 256};
        const oomtest::Limit truth{4096 * kMiB, 4096 * kMiB - 1500 * kMiB, std::nullopt};
        const alloc::RecordedTrace trace = recorded(shape, truth, "full2.pickle");
        const alloc::OomAnswer a = answerFor(trace, inferFrom(trace));
        QVERIFY(!a.fragmented);  // 180 MiB free in all, for 256 MiB: really full
        const auto row = std::find_if(a.whatIf.begin(), a.whatIf.end(),
                                      [](const alloc::OomWhatIfRow& r) { return r.config == "expandable_segments:True"; });
        QVERIFY(row != a.whatIf.end());
        QVERIFY(!row->holdsOverInterval());
        QVERIFY(row->oomAtLow && !row->oomAtHigh);
        QCOMPARE(row->threshold, std::optional<std::uint64_t>(1460 * kMiB));
        QCOMPARE(row->verdict, std::string("OOMs below 1.43 GiB"));
        QVERIFY(!row->oom);  // at the chosen limit, which is the true one (1500 MiB)
        QCOMPARE(row->oom, truthOoms(shape, row->config, truth));
        QVERIFY(truthOoms(shape, row->config, {truth.totalMemory, truth.totalMemory - 1458 * kMiB, std::nullopt}));
        QVERIFY2(QString::fromStdString(a.headline).contains("OOMs below 1.43 GiB"), a.headline.c_str());
        for (const alloc::OomWhatIfRow& r : a.whatIf) {
            if (r.config == "backend:cudaMallocAsync") continue;
            QVERIFY2(r.oom == truthOoms(shape, r.config, truth), r.config.c_str());
        }
    }

    // The 3-GPU field file: device 1 ends in an OOM on a full device (device_free 91 MiB for a
    // 4.94 GiB request). No limit makes the OOM vanish there: the recording's expandable
    // reservations (9/8 of the total memory each) bound the device below what the request needs,
    // so the device's room is the interval's upper end, and the chosen limit is reserved at the
    // failure + device_free, under which the replay is exact.
    void fieldSnapshotDeviceOneInterval() {
        const QString path = replaytest::fieldSnapshot("Constructor-Sun__code_location__memory_snapshot.pickle");
        if (path.isEmpty()) QSKIP("../shared/field-snapshots is not here");
        storage::TraceFile file = storage::TraceFile::read(path.toStdString());
        const auto device1 = std::find_if(file.traces.begin(), file.traces.end(), [](const alloc::RecordedTrace& t) { return t.device == 1; });
        QVERIFY(device1 != file.traces.end());
        const alloc::MemoryLimit limit = inferFrom(*device1);
        QCOMPARE(int(limit.source), int(alloc::MemoryLimit::Source::Inferred));
        QCOMPARE(int(limit.cause), int(alloc::MemoryLimit::Cause::DeviceFull));
        QVERIFY(limit.low <= limit.bytes && limit.bytes <= limit.high);
        QVERIFY(limit.low >= alloc::LimitInference::recordedPeakReserved(*device1));
        QVERIFY(limit.high < limit.low + alloc::LimitInference::allocationSize(limit.requested));
        QVERIFY2(limit.pick.find("expandable reservations bound its size") != std::string::npos, limit.pick.c_str());
        alloc::ReplayOptions options;
        options.config = alloc::parseConfig(device1->settings.value_or("")).config;
        alloc::LimitInference::apply(limit, options);
        QVERIFY(alloc::TraceReplayer::replay(*device1, options).exact());
        const alloc::OomAnswer a = answerFor(*device1, limit);
        QCOMPARE(limit.bytes, a.reserved + a.deviceFree);
        QVERIFY(!a.fragmented);
        QVERIFY2(QString::fromStdString(a.pytorchMessage).startsWith("CUDA out of memory. Tried to allocate 4.95 GiB."), a.pytorchMessage.c_str());
    }

    // Without an OOM only a lower bound is known: the preset stays.
    void noOomKeepsThePreset() {
        const QString path = replaytest::tracesDir() + "/kv_growth_limited__default.pickle";
        if (!QFile::exists(path)) QSKIP("shared traces not present");
        storage::TraceFile file = storage::TraceFile::read(path.toStdString());
        const alloc::MemoryLimit limit = inferFrom(file.traces.front());
        QCOMPARE(int(limit.source), int(alloc::MemoryLimit::Source::Preset));
        QCOMPARE(limit.deviceName, std::string("h100-80gb"));
        QCOMPARE(limit.totalMemory, kH100);
        QVERIFY(!limit.memoryFraction);
        QVERIFY(limit.low > 0 && limit.low < 0.05 * kH100);  // it ran under fraction 0.05
        QVERIFY(QString::fromStdString(limit.describe()).startsWith("no OOM recorded: the limit is at least "));
    }
};

QTEST_GUILESS_MAIN(TestLimitInference)
#include "TestLimitInference.moc"
