// recordProgram / importTraceFile: a recorded workload run rebuilds, at random events, exactly the
// state a direct allocator run had there; cancelling leaves an interrupted run; phases are stored
// as event ranges; the async backend and bad traces are refused before anything is written.
#include <QtTest>

#include <fstream>
#include <random>
#include <thread>

#include "StorageTestSupport.h"
#include "allocator/device/GpuPresets.h"
#include "allocator/workloads/WorkloadRegistry.h"
#include "storage/formats/FormatError.h"
#include "storage/session/ProgramRecording.h"
#include "storage/session/SessionError.h"
#include "storage/session/SessionReader.h"
#include "storage/session/StateCursor.h"
#include "tests/FileBytes.h"
#include "tests/SpillSetting.h"

using namespace allocscope;
using storagetest::layoutDifference;
using storagetest::statsDifference;
using storagetest::Truth;

namespace {

alloc::GeneratedProgram workload(const std::string& name, std::vector<std::pair<std::string, std::string>> overrides = {}) {
    const alloc::Workload& w = alloc::WorkloadRegistry::instance().get(name);
    return w.generate(w.resolve(overrides), 7);
}

storage::RecordTarget targetFor(const std::string& name, const std::string& configText, const alloc::AllocatorConfig& config,
                                const alloc::GpuPreset& gpu) {
    storage::RecordTarget target;
    target.info.name = name + " · " + (configText.empty() ? "default" : configText);
    target.info.source = name + " seed=7";
    target.info.config = configText;
    target.info.gpu = gpu.name;
    target.config = config;
    target.totalMemory = gpu.totalMemory;
    target.otherMemory = gpu.contextMemory;
    return target;
}

// A direct run of the program: calls afterOp(eventCount, allocator) after every applied op.
void directRun(const alloc::Program& program, const alloc::AllocatorConfig& config, const alloc::GpuPreset& gpu,
               std::optional<double> fraction, const std::function<void(std::uint64_t, alloc::CachingAllocator&)>& afterOp) {
    alloc::SimulatedDevice device(gpu.totalMemory, gpu.contextMemory, gpu.name);
    alloc::CountingSink sink;
    alloc::CachingAllocator allocator(config, device, &sink);
    if (fraction) allocator.setMemoryFraction(*fraction);
    alloc::ProgramRunner runner(allocator);
    alloc::ProgramResult result;
    for (std::size_t i = 0; i < program.ops.size(); ++i) {
        if (!runner.apply(program.ops[i], i, result)) break;
        afterOp(sink.total(), allocator);
    }
}

}  // namespace

class TestProgramRecording : public QObject {
    Q_OBJECT

private:
    QTemporaryDir dir_;

    std::string path(const char* name) const { return dir_.filePath(name).toStdString(); }

    void checkAgainstDirectRun(const std::string& name, const std::vector<std::pair<std::string, std::string>>& overrides,
                               const std::string& configText, std::optional<double> fraction, std::size_t samples) {
        const alloc::GeneratedProgram generated = workload(name, overrides);
        const alloc::GpuPreset gpu = *alloc::findGpuPreset(alloc::WorkloadRegistry::instance().get(name).defaultGpu());
        alloc::AllocatorConfig config;
        if (configText == "expandable_segments:True") config.expandableSegments = true;

        // Where op boundaries fall in the event stream (the state "at event N" is the state after
        // the last op whose events end at N).
        std::vector<std::uint64_t> boundaries;
        directRun(generated.program, config, gpu, fraction, [&](std::uint64_t count, alloc::CachingAllocator&) {
            if (count > 0 && (boundaries.empty() || boundaries.back() != count - 1)) boundaries.push_back(count - 1);
        });
        QVERIFY(boundaries.size() > samples);
        std::mt19937_64 rng(11);
        std::map<std::uint64_t, Truth> truth;
        while (truth.size() < samples) truth[boundaries[rng() % boundaries.size()]] = {};
        truth[boundaries.back()] = {};
        alloc::DeviceStats finalStats;
        directRun(generated.program, config, gpu, fraction, [&](std::uint64_t count, alloc::CachingAllocator& a) {
            finalStats = a.stats();
            if (count == 0) return;
            auto it = truth.find(count - 1);
            if (it != truth.end()) it->second = Truth{a.segments(), a.stats()};
        });

        const std::string file = path((name + configText + ".allocscope").c_str());
        storage::RecordedRun run;
        {
            storage::SessionWriter writer(file);
            storage::RecordTarget target = targetFor(name, configText, config, gpu);
            target.memoryFraction = fraction;
            run = storage::recordProgram(writer, generated.program, &generated.stacks, target);
        }
        QVERIFY(!run.cancelled);
        QVERIFY(run.result.ok());
        QVERIFY(statsDifference(finalStats, run.stats).empty());

        storage::SessionReader reader(file);
        const storage::RunRow row = reader.run(run.runNumber);
        QCOMPARE(row.status, storage::RunStatus::Complete);
        QCOMPARE(row.info.totalMemory, gpu.totalMemory);
        QCOMPARE(row.info.memoryFraction, fraction.value_or(1.0));
        QCOMPARE(row.eventCount, boundaries.back() + 1);
        storage::StateCursor cursor(reader, run.runNumber);
        for (const auto& [seq, want] : truth) {
            const storage::StateAtEvent got = cursor.load(seq);
            const std::string layout = layoutDifference(want.segments, got.segments);
            QVERIFY2(layout.empty(), (name + " at event " + std::to_string(seq) + ": " + layout).c_str());
            const std::string stats = statsDifference(want.stats, got.stats);
            QVERIFY2(stats.empty(), (name + " at event " + std::to_string(seq) + ": " + stats).c_str());
        }
        // Stacks were stored: some event names a stack whose frames come back.
        bool stackSeen = false;
        for (std::uint64_t first = 0; first < row.eventCount && !stackSeen; first += 4096) {
            for (const alloc::Event& e : reader.events(run.runNumber, first, 4096).events) {
                if (e.stackId != 0) {
                    QCOMPARE(reader.stack(run.runNumber, e.stackId), generated.stacks.stack(e.stackId));
                    stackSeen = true;
                    break;
                }
            }
        }
        QVERIFY(stackSeen || generated.stacks.size() <= 1);
    }

private slots:
    void recordedStateEqualsDirectRun_data() {
        QTest::addColumn<QString>("workload");
        QTest::addColumn<QString>("config");
        QTest::addColumn<double>("fraction");
        QTest::newRow("random-mix default") << "random-mix" << "" << 1.0;
        QTest::newRow("random-mix expandable") << "random-mix" << "expandable_segments:True" << 1.0;
        QTest::newRow("multi-stream default") << "multi-stream" << "" << 1.0;
        QTest::newRow("oom-with-free-memory default") << "oom-with-free-memory" << "" << 1.0;
        QTest::newRow("multi-model-sharing fraction") << "multi-model-sharing" << "" << 0.5;
    }

    void recordedStateEqualsDirectRun() {
        QFETCH(QString, workload);
        QFETCH(QString, config);
        QFETCH(double, fraction);
        std::vector<std::pair<std::string, std::string>> overrides;
        if (workload == "random-mix") overrides.emplace_back("events", "60000");
        checkAgainstDirectRun(workload.toStdString(), overrides, config.toStdString(),
                              fraction < 1.0 ? std::optional<double>(fraction) : std::nullopt, 200);
    }

    void oomIsAResultWithPyTorchsMessage() {
        const alloc::GeneratedProgram generated = workload("oom-with-free-memory");
        const alloc::GpuPreset gpu = *alloc::findGpuPreset("24gb");
        storage::SessionWriter writer(path("oom.allocscope"));
        const storage::RecordedRun run = storage::recordProgram(writer, generated.program, &generated.stacks,
                                                                targetFor("oom-with-free-memory", "", {}, gpu));
        QVERIFY(run.result.ok());
        QVERIFY(!run.result.ooms.empty());
        QVERIFY(run.result.ooms.front().message.find("Tried to allocate 256.00 MiB") != std::string::npos);
        QVERIFY(run.stats.num_ooms > 0);
    }

    void cancelLeavesAnInterruptedRun() {
        const alloc::GeneratedProgram generated = workload("random-mix", {{"events", "60000"}});
        const alloc::GpuPreset gpu = *alloc::findGpuPreset("h100-80gb");
        const std::string file = path("cancel.allocscope");
        std::uint64_t calls = 0;
        storage::RecordedRun run;
        {
            storage::SessionWriter writer(file);
            run = storage::recordProgram(writer, generated.program, &generated.stacks, targetFor("random-mix", "", {}, gpu),
                                         [&](std::uint64_t done, std::uint64_t total) {
                                             [&] { QVERIFY(done <= total); }();
                                             return ++calls < 3;
                                         });
        }
        QVERIFY(run.cancelled);
        QCOMPARE(calls, std::uint64_t(3));
        QVERIFY(run.result.opsRun < generated.program.ops.size());
        storage::SessionReader reader(file);
        const storage::RunRow row = reader.run(run.runNumber);
        QCOMPARE(row.status, storage::RunStatus::Interrupted);
        QVERIFY(row.eventCount > 0);
        // What was recorded up to the cancel is readable.
        storage::StateCursor cursor(reader, run.runNumber);
        QCOMPARE(cursor.load(row.eventCount - 1).seq, row.eventCount - 1);
    }

    void phasesAreStoredAsEventRanges() {
        alloc::Program program;
        program.labels = {"step", "forward", "nothing"};
        using alloc::Op;
        program.ops = {Op::phase(0, true),  Op::alloc(1, 4096),     Op::phase(1, true),  Op::alloc(2, 8 << 20),
                       Op::alloc(3, 100),   Op::phase(1, false),    Op::free(2),         Op::phase(0, false),
                       Op::phase(2, true),  Op::phase(2, false),    Op::phase(1, true),  Op::free(1)};
        const alloc::GpuPreset gpu = *alloc::findGpuPreset("h100-80gb");
        const std::string file = path("phases.allocscope");
        int number = 0;
        {
            storage::SessionWriter writer(file);
            number = storage::recordProgram(writer, program, nullptr, targetFor("phases", "", {}, gpu)).runNumber;
        }
        storage::SessionReader reader(file);
        const std::vector<storage::PhaseSpan> phases = reader.phases(number);
        // Events: 0 alloc(1) + segment_alloc..., so compute the expected seqs from the events.
        const storage::EventPage page = reader.events(number, 0, 100);
        auto firstOfOp = [&](std::uint64_t op) {
            for (const alloc::Event& e : page.events) {
                if (e.opIndex >= op) return e.seq;
            }
            return page.totalEvents;
        };
        QCOMPARE(phases.size(), std::size_t(3));  // "nothing" saw no event
        QCOMPARE(phases[0].name, std::string("step"));
        QCOMPARE(phases[0].depth, 0);
        QCOMPARE(phases[0].firstSeq, std::uint64_t(0));
        QCOMPARE(phases[0].lastSeq, firstOfOp(7) - 1);
        QCOMPARE(phases[0].firstOp, std::uint64_t(0));
        QCOMPARE(phases[0].lastOp, std::uint64_t(7));
        QCOMPARE(phases[1].name, std::string("forward"));
        QCOMPARE(phases[1].depth, 1);
        QCOMPARE(phases[1].firstSeq, firstOfOp(2));
        QCOMPARE(phases[1].lastSeq, firstOfOp(5) - 1);
        // Still open at the end: closed at the last event.
        QCOMPARE(phases[2].name, std::string("forward"));
        QCOMPARE(phases[2].firstSeq, firstOfOp(10));
        QCOMPARE(phases[2].lastSeq, page.totalEvents - 1);
    }

    void workloadPhasesAreStored() {
        const alloc::GeneratedProgram generated = workload("fragmentation-101");
        std::size_t marks = 0;
        for (const alloc::Op& op : generated.program.ops) marks += op.kind == alloc::OpKind::Phase && op.begin;
        if (marks == 0) QSKIP("fragmentation-101 has no phases");
        const std::string file = path("frag-phases.allocscope");
        int number = 0;
        {
            storage::SessionWriter writer(file);
            number = storage::recordProgram(writer, generated.program, &generated.stacks,
                                            targetFor("fragmentation-101", "", {}, *alloc::findGpuPreset("h100-80gb")))
                         .runNumber;
        }
        storage::SessionReader reader(file);
        const auto phases = reader.phases(number);
        QVERIFY(!phases.empty());
        for (const auto& p : phases) QVERIFY(p.firstSeq <= p.lastSeq);
    }

    void asyncBackendIsRefusedBeforeWriting() {
        const std::string file = path("async.allocscope");
        {
            storage::SessionWriter writer(file);
            alloc::AllocatorConfig config;
            config.backend = alloc::Backend::CudaMallocAsync;
            const alloc::GeneratedProgram generated = workload("fragmentation-101");
            QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                     storage::recordProgram(writer, generated.program, nullptr,
                                                            targetFor("f", "backend:cudaMallocAsync", config,
                                                                      *alloc::findGpuPreset("h100-80gb"))));
        }
        storage::SessionReader reader(file);
        QVERIFY(reader.runs().empty());
    }

    void parallelRecordingsShareOneWriter() {
        const alloc::GeneratedProgram generated = workload("random-mix", {{"events", "20000"}});
        const alloc::GpuPreset gpu = *alloc::findGpuPreset("h100-80gb");
        const std::string file = path("parallel.allocscope");
        storage::RecordedRun a, b;
        {
            storage::SessionWriter writer(file);
            alloc::AllocatorConfig expandable;
            expandable.expandableSegments = true;
            std::thread other([&] {
                b = storage::recordProgram(writer, generated.program, &generated.stacks,
                                           targetFor("random-mix", "expandable_segments:True", expandable, gpu));
            });
            a = storage::recordProgram(writer, generated.program, &generated.stacks, targetFor("random-mix", "", {}, gpu));
            other.join();
        }
        QVERIFY(a.runNumber != b.runNumber);
        storage::SessionReader reader(file);
        const auto runs = reader.runs();
        QCOMPARE(runs.size(), std::size_t(2));
        for (const auto& row : runs) {
            QCOMPARE(row.status, storage::RunStatus::Complete);
            const storage::RecordedRun& run = row.number == a.runNumber ? a : b;
            QVERIFY(statsDifference(run.stats, row.summary->finalStats).empty());
        }
    }

    void importTraceFileRecordsTheReplay() {
        const std::string trace = std::string(ALLOCSCOPE_TEST_DATA) + "/traces/frag101__default.pickle";
        const std::string file = path("import.allocscope");
        std::vector<storage::ImportedRun> runs;
        std::uint64_t lastDone = 0, lastTotal = 0;
        {
            storage::SessionWriter writer(file);
            runs = storage::importTraceFile(writer, trace, {}, [&](std::uint64_t done, std::uint64_t total) {
                lastDone = done;
                lastTotal = total;
                return true;
            });
        }
        QCOMPARE(runs.size(), std::size_t(1));
        QCOMPARE(runs[0].divergence, std::string());
        QVERIFY(!runs[0].cancelled);
        QVERIFY(lastTotal > 0);
        QCOMPARE(lastDone, lastTotal);
        storage::SessionReader reader(file);
        const storage::RunRow row = reader.run(runs[0].runNumber);
        QCOMPARE(row.status, storage::RunStatus::Complete);
        QCOMPARE(row.info.name, std::string("frag101__default.pickle"));
        QCOMPARE(row.info.sourceKind, std::string("snapshot"));
        QCOMPARE(row.info.gpu, std::string("h100-80gb"));
    }

    void cancelledImportLeavesAnInterruptedRun() {
        const std::string trace = std::string(ALLOCSCOPE_TEST_DATA) + "/traces/train_gpt__default.pickle";
        const std::string file = path("import-cancel.allocscope");
        std::vector<storage::ImportedRun> runs;
        {
            storage::SessionWriter writer(file);
            runs = storage::importTraceFile(writer, trace, {}, [](std::uint64_t, std::uint64_t) { return false; });
        }
        QCOMPARE(runs.size(), std::size_t(1));
        QVERIFY(runs[0].cancelled);
        storage::SessionReader reader(file);
        const storage::RunRow row = reader.run(runs[0].runNumber);
        QCOMPARE(row.status, storage::RunStatus::Interrupted);
        QVERIFY(row.eventCount > 0 && row.eventCount < 8131);
    }

    // An imported snapshot's record_function regions (train_gpt: AdamW's step and zero_grad, 5
    // times each) are placed as they come during the replay: each one's mark sits between the
    // events of the ops before it and those after it, and the values are those the import stored
    // when it placed the marks after the whole replay (before #18 streamed them).
    void importedPhasesSitBetweenTheirEvents() {
        const std::string trace = std::string(ALLOCSCOPE_TEST_DATA) + "/traces/train_gpt__default.pickle";
        const std::string file = path("import-phases.allocscope");
        std::vector<storage::ImportedRun> runs;
        {
            storage::SessionWriter writer(file);
            runs = storage::importTraceFile(writer, trace, {});
        }
        QCOMPARE(runs.size(), std::size_t(1));
        storage::SessionReader reader(file);
        const std::vector<storage::PhaseSpan> phases = reader.phases(runs[0].runNumber);
        QCOMPARE(phases.size(), std::size_t(10));
        const storage::EventPage page = reader.events(runs[0].runNumber, 0, 10000);
        QCOMPARE(page.events.size(), std::size_t(page.totalEvents));
        for (std::size_t i = 0; i < phases.size(); ++i) {
            const storage::PhaseSpan& p = phases[i];
            QCOMPARE(p.name, std::string(i % 2 == 0 ? "Optimizer.step#AdamW.step" : "Optimizer.zero_grad#AdamW.zero_grad"));
            QCOMPARE(p.depth, 0);
            QVERIFY(p.firstSeq > 0 && p.lastSeq + 1 < page.totalEvents);
            QVERIFY(page.events[p.firstSeq - 1].opIndex < p.firstOp && page.events[p.firstSeq].opIndex > p.firstOp);
            QVERIFY(page.events[p.lastSeq].opIndex < p.lastOp && page.events[p.lastSeq + 1].opIndex > p.lastOp);
        }
        QCOMPARE(phases[0].firstSeq, std::uint64_t(1245));
        QCOMPARE(phases[0].lastSeq, std::uint64_t(1614));
        QCOMPARE(phases[0].firstOp, std::uint64_t(838));
        QCOMPARE(phases[0].lastOp, std::uint64_t(1135));
        QCOMPARE(phases[9].firstSeq, std::uint64_t(7533));
        QCOMPARE(phases[9].lastSeq, std::uint64_t(7680));
        QCOMPARE(phases[9].firstOp, std::uint64_t(5096));
        QCOMPARE(phases[9].lastOp, std::uint64_t(5171));
    }

    // The regions are stored as they close, with the events: an import cancelled during its
    // replay keeps those that closed before the cancel (the same as a whole import stores).
    void aCancelledImportKeepsThePhasesThatClosed() {
        const std::string trace = std::string(ALLOCSCOPE_TEST_DATA) + "/traces/train_gpt__default.pickle";
        const std::string file = path("import-phases-cancel.allocscope");
        std::vector<storage::ImportedRun> whole, cancelled;
        {
            storage::SessionWriter writer(file);
            whole = storage::importTraceFile(writer, trace, {});
            cancelled = storage::importTraceFile(writer, trace, {}, [](std::uint64_t, std::uint64_t) { return false; });
        }
        QCOMPARE(cancelled.size(), std::size_t(1));
        QVERIFY(cancelled[0].cancelled);
        storage::SessionReader reader(file);
        const storage::RunRow row = reader.run(cancelled[0].runNumber);
        QCOMPARE(row.status, storage::RunStatus::Interrupted);
        const std::vector<storage::PhaseSpan> all = reader.phases(whole[0].runNumber);
        const std::vector<storage::PhaseSpan> kept = reader.phases(cancelled[0].runNumber);
        // A region closes when the first event after its end arrives.
        std::size_t closed = 0;
        while (closed < all.size() && all[closed].lastSeq + 1 < row.eventCount) ++closed;
        QVERIFY2(closed > 0 && closed < all.size(), qPrintable(QString("%1 of %2 closed").arg(closed).arg(all.size())));
        QCOMPARE(kept.size(), closed);
        for (std::size_t i = 0; i < kept.size(); ++i) {
            QCOMPARE(kept[i].name, all[i].name);
            QCOMPARE(kept[i].firstSeq, all[i].firstSeq);
            QCOMPARE(kept[i].lastSeq, all[i].lastSeq);
            QCOMPARE(kept[i].firstOp, all[i].firstOp);
            QCOMPARE(kept[i].lastOp, all[i].lastOp);
        }
    }

    // A streamed read reports its bytes; cancelled there, the import records nothing at all.
    void cancelledStreamedReadRecordsNothing() {
        const std::string trace = std::string(ALLOCSCOPE_TEST_DATA) + "/traces/train_gpt__default.pickle";
        const std::string file = path("import-cancel-read.allocscope");
        std::vector<storage::ImportedRun> runs;
        std::uint64_t firstDone = 0, firstTotal = 0;
        {
            storage::SessionWriter writer(file);
            storage::ImportTarget target;
            target.streaming = storage::StreamMode::Always;
            runs = storage::importTraceFile(writer, trace, target, [&](std::uint64_t done, std::uint64_t total) {
                firstDone = done;
                firstTotal = total;
                return false;  // cancel at the first report: the read's (the file fits one buffer)
            });
        }
        QCOMPARE(firstTotal, std::uint64_t{1000});
        QCOMPARE(firstDone, std::uint64_t{400});  // the whole file read: the read's 40 %
        QVERIFY(runs.empty());
        storage::SessionReader reader(file);
        QVERIFY(reader.runs().empty());
    }

    // A streamed import refused deep in its file (a damaged byte, a cut file) or cancelled while it
    // reads leaves an existing session byte for byte as it was, with no sidecar file beside it; the
    // error names the damaged byte.
    void aFailedStreamedImportLeavesTheSessionAsItWas() {
        const std::string session = path("kept.allocscope");
        {
            storage::SessionWriter writer(session);
            storage::importTraceFile(writer, std::string(ALLOCSCOPE_TEST_DATA) + "/traces/frag101__default.pickle", {});
        }
        const auto contents = [](const std::string& file) {
            QFile f(QString::fromStdString(file));
            return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
        };
        const QByteArray before = contents(session);
        QVERIFY(!before.isEmpty());

        const std::string source = std::string(ALLOCSCOPE_TEST_DATA) + "/traces/train_gpt__default.pickle";
        const QByteArray bytes = contents(source);
        const qsizetype at = bytes.indexOf(QByteArray("\x8c\x03N/A", 5), bytes.size() * 7 / 10);  // one per entry
        QVERIFY(at > 0);
        QByteArray damaged = bytes;
        damaged[at] = '\xff';
        const auto write = [this](const char* name, const QByteArray& data) {
            QFile f(QString::fromStdString(path(name)));
            if (!f.open(QIODevice::WriteOnly) || f.write(data) != data.size()) return std::string();
            return path(name);
        };
        const std::string damagedFile = write("damaged.pickle", damaged);
        const std::string cutFile = write("cut.pickle", bytes.left(bytes.size() * 6 / 10));
        QVERIFY(!damagedFile.empty() && !cutFile.empty());

        storage::ImportTarget target;
        target.streaming = storage::StreamMode::Always;
        const std::vector<std::pair<std::string, std::string>> cases{
            {damagedFile, "unknown pickle opcode 0xff (not a pickle, or corrupted) (" + damagedFile + ": byte " + std::to_string(at) + ")"},
            {cutFile, "FRAME declares 65538 bytes but only "}};
        for (const auto& [file, expected] : cases) {
            {
                storage::SessionWriter writer(session);
                try {
                    storage::importTraceFile(writer, file, target, [](std::uint64_t, std::uint64_t) { return true; });
                    QFAIL("a broken pickle was imported");
                } catch (const formats::FormatError& e) {
                    QVERIFY2(std::string(e.what()).find(expected) != std::string::npos, e.what());
                }
            }
            QVERIFY(contents(session) == before);
            QVERIFY(!QFile::exists(QString::fromStdString(session + "-wal")));
            QVERIFY(!QFile::exists(QString::fromStdString(session + "-shm")));
        }
        {
            storage::SessionWriter writer(session);
            const auto runs = storage::importTraceFile(writer, source, target, [](std::uint64_t, std::uint64_t) { return false; });
            QVERIFY(runs.empty());
        }
        QVERIFY(contents(session) == before);
        QVERIFY(!QFile::exists(QString::fromStdString(session + "-wal")));
    }

    // A big import's trace lives in unnamed temporary files (forced here with a 4 KiB threshold):
    // they are open in $TMPDIR while the import runs, never visible there, and gone (closed) after
    // an import that succeeds, is refused deep in its file, or is cancelled during its replay.
    void aSpilledImportLeavesNoTemporaryFile() {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const testfiles::SpillSetting spill(4096, tmp.path());
        const std::string dir = tmp.path().toStdString() + "/";
        const auto openSpills = [&dir] {
            std::size_t n = 0;
            const QDir fds(QStringLiteral("/proc/self/fd"));
            for (const QString& fd : fds.entryList(QDir::AllEntries | QDir::System | QDir::NoDotAndDotDot)) {
                n += QFile::symLinkTarget(fds.filePath(fd)).toStdString().rfind(dir, 0) == 0 ? 1 : 0;
            }
            return n;
        };
        const std::string source = std::string(ALLOCSCOPE_TEST_DATA) + "/traces/train_gpt__default.pickle";
        storage::ImportTarget target;
        target.streaming = storage::StreamMode::Always;
        std::size_t openDuringReplay = 0;
        QStringList seenDuringReplay;
        {
            storage::SessionWriter writer(path("spilled.allocscope"));
            const auto runs = storage::importTraceFile(writer, source, target, [&](std::uint64_t done, std::uint64_t total) {
                if (done * 2 > total && done < total) {  // in the replay
                    openDuringReplay = std::max(openDuringReplay, openSpills());
                    seenDuringReplay += testfiles::SpillSetting::filesIn(tmp.path());
                }
                return true;
            });
            QCOMPARE(runs.size(), std::size_t{1});
            QCOMPARE(runs[0].divergence, std::string());
        }
        QVERIFY2(openDuringReplay >= 1, "the entries were not spilled");  // steps are cut as the replay goes
        QCOMPARE(seenDuringReplay, QStringList());
        QCOMPARE(openSpills(), std::size_t{0});

        std::string bytes = testfiles::readBytes(source);
        const std::size_t at = bytes.find(std::string("\x8c\x03N/A", 5), bytes.size() * 7 / 10);  // one per entry
        QVERIFY(at != std::string::npos);
        bytes[at] = '\xff';
        const std::string damaged = path("spilled-damaged.pickle");
        {
            std::ofstream out(damaged, std::ios::binary);
            out << bytes;
        }
        {
            storage::SessionWriter writer(path("spilled-damaged.allocscope"));
            QVERIFY_THROWS_EXCEPTION(formats::FormatError, storage::importTraceFile(writer, damaged, target, {}));
        }
        QCOMPARE(testfiles::SpillSetting::filesIn(tmp.path()), QStringList());
        QCOMPARE(openSpills(), std::size_t{0});
        {
            storage::SessionWriter writer(path("spilled-cancel.allocscope"));
            const auto runs = storage::importTraceFile(writer, source, target,
                                                       [](std::uint64_t done, std::uint64_t total) { return done * 2 < total; });
            QCOMPARE(runs.size(), std::size_t{1});
            QVERIFY(runs[0].cancelled);
        }
        QCOMPARE(testfiles::SpillSetting::filesIn(tmp.path()), QStringList());
        QCOMPARE(openSpills(), std::size_t{0});
    }

    void importRefusesBadInputBeforeWriting() {
        const std::string file = path("bad-import.allocscope");
        const std::string garbage = path("garbage.pickle");
        {
            std::ofstream out(garbage, std::ios::binary);
            out << "\x80\x04garbage";
        }
        {
            storage::SessionWriter writer(file);
            try {
                storage::importTraceFile(writer, garbage, {});
                QFAIL("a garbage pickle was imported");
            } catch (const formats::FormatError& e) {
                QVERIFY2(e.location().find(garbage) != std::string::npos, e.what());
            }
            storage::ImportTarget unknownGpu;
            unknownGpu.gpuName = "no-such-gpu";
            QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                     storage::importTraceFile(writer, std::string(ALLOCSCOPE_TEST_DATA) + "/traces/frag101__default.pickle",
                                                              unknownGpu));
        }
        storage::SessionReader reader(file);
        QVERIFY(reader.runs().empty());
    }
};

QTEST_GUILESS_MAIN(TestProgramRecording)
#include "TestProgramRecording.moc"
