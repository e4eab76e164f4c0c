// The streaming import (issue #18): a snapshot pickle read in one pass through a bounded buffer,
// each trace entry converted as it is read, gives exactly the traces of the whole-file read, and
// so the same replay; its errors name the same byte; and it really drops what it converted.
// Streaming is forced on these small files (TraceFile streams only big ones by itself).
#include <QtTest>

#include <tuple>

#include <cstring>
#include <string>
#include <vector>

#include "ReplayTestData.h"
#include "TraceComparison.h"
#include "allocator/replay/TraceReplayer.h"
#include "storage/formats/FormatError.h"
#include "storage/formats/PickleReader.h"
#include "storage/formats/SnapshotReader.h"
#include "storage/formats/StreamingUnsupported.h"
#include "storage/formats/TraceBatchSink.h"
#include "storage/import/TraceBuilder.h"
#include "storage/import/TraceFile.h"
#include "storage/import/TraceImport.h"
#include "tests/FileBytes.h"
#include "tests/SpillSetting.h"

using namespace allocscope;

namespace {

std::string data(const std::string& name) { return std::string(ALLOCSCOPE_TEST_DATA) + "/" + name; }

using testing::traceDifference;
using testing::streamedTraces;
using testing::wholeTraces;

// Counts what a streaming read hands over, keeping nothing.
class CountingSink final : public formats::TraceBatchSink {
public:
    void onEntries(const formats::PyTree&, std::size_t, std::size_t first, formats::PyItems entries) override {
        QCOMPARE(first, entries_);
        entries_ += entries.size();
        ++batches_;
    }
    void forget(formats::PyRef, std::size_t) override {}
    std::size_t entries_ = 0;
    std::size_t batches_ = 0;
};

// A pickle as Python's pickler writes a snapshot, by hand: {'segments': [], 'device_traces':
// [[e0, ..., e1000]]} in APPENDS batches of 1,000, whose last item is e0 again (a memo BINGET of
// an entry the stream has already converted and dropped).
std::string entryReferredTwice() {
    std::string p("\x80\x04", 2);
    std::uint32_t memo = 0;
    auto memoize = [&] {
        p += '\x94';
        return memo++;
    };
    auto str = [&](const std::string& text) {
        p += '\x8c';
        p += static_cast<char>(text.size());
        p += text;
        memoize();
    };
    auto binint = [&](std::uint32_t v) {
        p += 'J';
        for (int i = 0; i < 4; ++i) p += static_cast<char>((v >> (8 * i)) & 0xFF);
    };
    auto binget = [&](std::uint32_t index) {
        p += 'j';
        for (int i = 0; i < 4; ++i) p += static_cast<char>((index >> (8 * i)) & 0xFF);
    };
    p += '}';
    memoize();
    p += '(';
    str("segments");
    p += ']';
    memoize();
    str("device_traces");
    p += ']';
    memoize();
    p += ']';
    memoize();
    p += '(';
    std::uint32_t first = 0;
    for (std::uint32_t i = 0; i < 1000; ++i) {
        p += '}';
        const std::uint32_t entry = memoize();
        if (i == 0) first = entry;
        p += '(';
        str("action");
        str("alloc");
        str("addr");
        binint(0x100000 + i * 512);
        str("size");
        binint(512);
        p += 'u';
    }
    p += 'e';
    p += '(';
    binget(first);
    p += 'e';
    p += 'a';  // the device list into device_traces
    p += 'u';  // the top-level dict's items
    p += '.';
    return p;
}

}  // namespace

class TestStreamingImport : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

    // Both ways of reading report the same error, and it is `expected` (a substring).
    void sameError(const std::string& path, const std::string& expected) {
        const std::string streamedError = testing::formatErrorOf([&] { streamedTraces(path); });
        const std::string wholeError = testing::formatErrorOf([&] { wholeTraces(path); });
        QCOMPARE(streamedError, wholeError);
        QVERIFY2(!streamedError.starts_with("not a FormatError"), streamedError.c_str());
        QVERIFY2(streamedError.find(expected) != std::string::npos, streamedError.c_str());
    }

private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    // Every shared snapshot pickle: one device or two, private pools, truncated histories,
    // shared frame lists, phases.
    void streamedTracesAreTheWholeReadsTraces_data() {
        QTest::addColumn<QString>("name");
        for (const char* dir : {"traces", "pools"}) {
            const QDir d(QString::fromStdString(data(dir)));
            for (const QString& file : d.entryList({QStringLiteral("*.pickle")}, QDir::Files, QDir::Name)) {
                const QString name = QString::fromLatin1(dir) + "/" + file;
                QTest::newRow(qPrintable(name)) << name;
            }
        }
    }
    void streamedTracesAreTheWholeReadsTraces() {
        QFETCH(QString, name);
        const std::string path = data(name.toStdString());
        const std::vector<alloc::RecordedTrace> a = streamedTraces(path);
        QVERIFY(!a.empty());
        const std::string diff = traceDifference(a, wholeTraces(path));
        QVERIFY2(diff.empty(), diff.c_str());
        // TraceFile (what every import uses) takes the same way when told to stream.
        const std::string viaFile = traceDifference(storage::TraceFile::load(path, storage::StreamMode::Always).traces, a);
        QVERIFY2(viaFile.empty(), viaFile.c_str());
    }

    // The same run: same events, same final statistics, same verdict (exact).
    void streamedImportReplaysTheSame() {
        const replaytest::GroundTruth truth = replaytest::loadGroundTruth(QStringLiteral("train_gpt__default"));
        QVERIFY(truth.loaded);
        const std::string path = data("traces/train_gpt__default.pickle");
        const alloc::ReplayOptions options = replaytest::optionsFor(truth);
        const alloc::ReplayResult a = alloc::TraceReplayer::replay(streamedTraces(path).front(), options);
        const alloc::ReplayResult b = alloc::TraceReplayer::replay(wholeTraces(path).front(), options);
        QVERIFY2(a.exact(), qPrintable(replaytest::describeInexact(a)));
        QVERIFY(b.exact());
        QCOMPARE(a.events, b.events);
        QCOMPARE(a.program.ops.size(), b.program.ops.size());
        QCOMPARE(replaytest::diffStats(truth.stats, a.stats), QString());
        QVERIFY(a.stats == b.stats);
    }

    // A trace whose entries and steps live in temporary files (SpillArray, forced here with a
    // 4 KiB threshold) replays as one in memory: the same events, statistics, verdict and
    // inferences. train_gpt: the ground truth; frag101: an explicit empty_cache() call
    // inferred by re-running the prefix; ringbuf_train: a truncated history (HistoryWindow
    // walks it backwards); mempool_mix: private pools (the inference re-runs the whole trace for
    // each of its 8 revised guesses).
    void aSpilledTraceReplaysTheSame_data() {
        QTest::addColumn<QString>("dir");
        QTest::addColumn<QString>("name");
        QTest::newRow("train_gpt__default") << "traces" << "train_gpt__default";
        QTest::newRow("frag101__default") << "traces" << "frag101__default";
        QTest::newRow("ringbuf_train__default") << "pools" << "ringbuf_train__default";
        QTest::newRow("mempool_mix__default") << "pools" << "mempool_mix__default";
    }
    void aSpilledTraceReplaysTheSame() {
        QFETCH(QString, dir);
        QFETCH(QString, name);
        const QString dataDir = QString::fromStdString(data(dir.toStdString()));
        const replaytest::GroundTruth truth = replaytest::loadGroundTruth(name, dir == "traces" ? QString() : dataDir);
        QVERIFY(truth.loaded);
        const std::string path = data((dir + "/" + name + ".pickle").toStdString());
        const alloc::ReplayOptions options = replaytest::optionsFor(truth);
        const std::vector<alloc::RecordedTrace> inMemory = streamedTraces(path);
        QVERIFY(!inMemory.front().entries.spilled());
        const alloc::ReplayResult a = alloc::TraceReplayer::replay(inMemory.front(), options);
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const testfiles::SpillSetting spill(4096, tmp.path());
        const std::vector<alloc::RecordedTrace> spilled = streamedTraces(path);
        QVERIFY(spilled.front().entries.spilled());
        const std::string diff = traceDifference(spilled, inMemory);
        QVERIFY2(diff.empty(), diff.c_str());
        const alloc::ReplayResult b = alloc::TraceReplayer::replay(spilled.front(), options);
        QVERIFY2(b.exact(), qPrintable(replaytest::describeInexact(b)));
        QCOMPARE(a.exact(), b.exact());
        QCOMPARE(b.events, a.events);
        QCOMPARE(b.steps, a.steps);
        QCOMPARE(b.program.ops.size(), a.program.ops.size());
        QVERIFY(b.stats == a.stats);
        QCOMPARE(b.emptyCacheSteps, a.emptyCacheSteps);
        QCOMPARE(b.rewinds, a.rewinds);
        QVERIFY(b.poolAssignments == a.poolAssignments);
        QCOMPARE(b.truncation.has_value(), a.truncation.has_value());
        QCOMPARE(b.segments.size(), a.segments.size());
        // A truncated history counts only its window (HistoryWindow::windowOnlyKeys).
        if (!b.truncation) QCOMPARE(replaytest::diffStats(truth.stats, b.stats), QString());
        qInfo("%s: %zu entries, %zu steps, %llu rewinds, %zu pool revisions", qPrintable(name), spilled.front().entries.size(),
              b.steps, static_cast<unsigned long long>(b.rewinds), b.poolRevisions);
        QCOMPARE(testfiles::SpillSetting::filesIn(tmp.path()), QStringList());
    }

    // The record_function marks are a SpillArray of compact marks (names kept once) too: forced
    // into a file, they read and replay as in memory, and the replay applies the same marks.
    void spilledPhaseMarksReplayTheSame() {
        const std::string path = data("traces/train_gpt__default.pickle");
        using Marks = std::vector<std::tuple<std::uint64_t, std::string, bool>>;
        const replaytest::GroundTruth truth = replaytest::loadGroundTruth(QStringLiteral("train_gpt__default"));
        QVERIFY(truth.loaded);
        const auto marksOf = [&truth](const alloc::RecordedTrace& trace) {
            Marks marks;
            alloc::ReplayOptions options = replaytest::optionsFor(truth);
            options.keepOps = false;
            options.onPhase = [&marks](std::uint64_t op, const std::string& name, bool begin) { marks.emplace_back(op, name, begin); };
            [&] { QVERIFY(alloc::TraceReplayer::replay(trace, options).exact()); }();
            return marks;
        };
        const std::vector<alloc::RecordedTrace> inMemory = streamedTraces(path);
        QVERIFY(!inMemory.front().phases.spilled());
        const Marks expected = marksOf(inMemory.front());
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const testfiles::SpillSetting spill(64, tmp.path());
        const std::vector<alloc::RecordedTrace> spilled = streamedTraces(path);
        const alloc::RecordedTrace& trace = spilled.front();
        QVERIFY(trace.phases.spilled());
        QCOMPARE(trace.phases.size(), std::size_t{20});
        QCOMPARE(trace.phaseNames.size(), std::size_t{2});  // AdamW's step and zero_grad, 5 times each
        const std::string diff = traceDifference(spilled, inMemory);
        QVERIFY2(diff.empty(), diff.c_str());
        QCOMPARE(marksOf(trace), expected);
        QCOMPARE(expected.size(), std::size_t{20});
        for (std::size_t i = 0; i < expected.size(); ++i) {
            QCOMPARE(std::get<2>(expected[i]), i % 2 == 0);  // START, END, START, ...
            if (i > 0) QVERIFY(std::get<0>(expected[i - 1]) < std::get<0>(expected[i]));
        }
    }

    // What was converted is dropped: the tree left at the end is a small part of the whole one.
    void streamingDropsTheEntries() {
        const std::string path = data("traces/train_gpt__default.pickle");
        CountingSink sink;
        const formats::PyTree kept = formats::PickleReader::readFile(path, &sink);
        const formats::PyTree all = formats::PickleReader::read(testfiles::readBytes(path));
        QCOMPARE(sink.entries_, std::size_t{8131});
        QVERIFY(sink.batches_ >= 9);  // APPENDS of 1000
        QVERIFY2(kept.size() * 10 < all.size(), qPrintable(QString("%1 of %2 values kept").arg(kept.size()).arg(all.size())));
    }

    // A damaged byte deep in the file (in the trace entries) is named by its position, as when
    // the file is read whole.
    void aDamagedByteIsNamedByItsPosition() {
        std::string bytes = testfiles::readBytes(data("traces/train_gpt__default.pickle"));
        const std::string na("\x8c\x03N/A", 5);  // SHORT_BINUNICODE 'N/A', one per trace entry
        const std::size_t at = bytes.find(na, bytes.size() * 7 / 10);
        QVERIFY(at != std::string::npos);
        std::string opcode = bytes;
        opcode[at] = '\xff';
        sameError(testfiles::writeIn(dir_, "opcode.pickle", opcode), "unknown pickle opcode 0xff (not a pickle, or corrupted) (byte " +
                                                      std::to_string(at) + ")");
        std::string text = bytes;
        text[at + 3] = '\xff';
        sameError(testfiles::writeIn(dir_, "utf8.pickle", text), "invalid UTF-8 in SHORT_BINUNICODE string at byte " + std::to_string(at + 3));
    }

    void aCutFileSaysSo() {
        const std::string bytes = testfiles::readBytes(data("traces/train_gpt__default.pickle"));
        // Python's pickler frames the file in 64 KiB FRAMEs: a cut inside one is found at its FRAME.
        sameError(testfiles::writeIn(dir_, "cut.pickle", bytes.substr(0, bytes.size() * 6 / 10)), "FRAME declares 65538 bytes but only ");
        sameError(testfiles::writeIn(dir_, "empty.pickle", std::string()), "empty input: not a pickle (byte 0)");
    }

    // A pickle the stream cannot follow is read whole instead, with the same traces.
    void aPickleReferringBackToAnEntryIsReadWhole() {
        const std::string path = testfiles::writeIn(dir_, "twice.pickle", entryReferredTwice());
        QVERIFY_THROWS_EXCEPTION(formats::StreamingUnsupported, streamedTraces(path));
        const std::vector<alloc::RecordedTrace> traces = storage::TraceFile::load(path, storage::StreamMode::Always).traces;
        QCOMPARE(traces.size(), std::size_t{1});
        QCOMPARE(traces.front().entries.size(), std::size_t{1001});
        QCOMPARE(traces.front().entries.back().address, traces.front().entries.front().address);
        const std::string diff = traceDifference(traces, wholeTraces(path));
        QVERIFY2(diff.empty(), diff.c_str());
    }

    // An entry the import refuses is refused while the file is read, with its place.
    void aBadEntryIsNamed() {
        std::string bytes = testfiles::readBytes(data("traces/train_gpt__default.pickle"));
        const std::string alloc("\x8c\x05" "alloc", 7);  // the one 'alloc' string; entries share it
        const std::size_t at = bytes.find(alloc);
        QVERIFY(at != std::string::npos);
        bytes[at + 6] = 'z';
        sameError(testfiles::writeIn(dir_, "action.pickle", bytes), "unknown trace action 'alloz' (device_traces[0][1])");
    }
};

QTEST_GUILESS_MAIN(TestStreamingImport)
#include "TestStreamingImport.moc"
