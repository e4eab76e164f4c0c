// SpillArray (issue #18): past its threshold the values live in an unnamed temporary file, a
// window of them in memory. It returns what was written, forwards and backwards across window and
// file-growth boundaries, with references held while the pages under them leave memory; readers
// that walk it keep the resident set bounded; nothing is ever left in $TMPDIR.
#include <QtTest>

#include <array>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <sys/resource.h>

#include "allocator/core/CachingAllocator.h"
#include "allocator/core/ProgramRunner.h"
#include "allocator/device/SimulatedDevice.h"
#include "allocator/replay/HiddenRangeCalibration.h"
#include "allocator/replay/ProgramFromTrace.h"
#include "allocator/replay/ReferencePlacement.h"
#include "allocator/replay/RecordedTrace.h"
#include "allocator/core/SpillArray.h"
#include "tests/SpillSetting.h"

using namespace allocscope;

namespace {

using Entries = alloc::SpillArray<alloc::RecordedEntry>;

alloc::RecordedEntry entry(std::size_t i) {
    alloc::RecordedEntry e;
    e.action = static_cast<alloc::EventAction>(i % 4);
    e.stackId = static_cast<std::uint32_t>(i * 7);
    e.address = 0x7f0000000000ull + i * 512;
    e.size = i * 3 + 1;
    e.streamIndex = static_cast<std::uint16_t>(i % 5);
    return e;
}

bool same(const alloc::RecordedEntry& e, std::size_t i) {
    const alloc::RecordedEntry f = entry(i);
    return e.action == f.action && e.stackId == f.stackId && e.address == f.address && e.size == f.size &&
           e.streamIndex == f.streamIndex;
}

// Bytes of file-backed pages the process has mapped and resident (the spilled pages count here).
std::size_t residentFileBytes() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind("RssFile:", 0) == 0) return std::stoull(line.substr(8)) * 1024;
    }
    return 0;
}

// One 2 MiB segment, then `tensors` times: a 512-byte tensor allocated and freed at its start.
alloc::RecordedTrace segmentOfSmallTensors(std::size_t tensors) {
    alloc::RecordedTrace trace;
    alloc::RecordedEntry e;
    e.action = alloc::EventAction::SegmentAlloc;
    e.address = 0x7f0000000000ull;
    e.size = 2ull << 20;
    trace.entries.push_back(e);
    e.size = 512;
    for (std::size_t i = 0; i < tensors; ++i) {
        for (const alloc::EventAction a : {alloc::EventAction::Alloc, alloc::EventAction::FreeRequested,
                                           alloc::EventAction::FreeCompleted}) {
            e.action = a;
            trace.entries.push_back(e);
        }
    }
    return trace;
}

}  // namespace

class TestSpillArray : public QObject {
    Q_OBJECT

private slots:
    void smallArraysStayInMemory() {
        Entries a;
        for (std::size_t i = 0; i < 1000; ++i) a.push_back(entry(i));
        QVERIFY(!a.spilled());
        QCOMPARE(a.size(), std::size_t{1000});
        for (std::size_t i = 0; i < a.size(); ++i) QVERIFY(same(a[i], i));
    }

    // 3 M entries of 24 bytes: 72 MB, past a file growth step (64 MiB) and many 4 MiB windows.
    void spilledValuesReadBackForwardsAndBackwards() {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const testfiles::SpillSetting spill(4096, tmp.path());
        constexpr std::size_t n = 3'000'000;
        Entries a;
        for (std::size_t i = 0; i < n; ++i) a.push_back(entry(i));
        QVERIFY(a.spilled());
        QCOMPARE(a.size(), n);
        // A reference and an iterator taken before the walks that drop their pages.
        const alloc::RecordedEntry& early = a[17];
        const alloc::RecordedEntry* middle = a.begin() + n / 2;
        bool ok = true;
        Entries::Walk forward(a);
        for (std::size_t i = 0; i < n; ++i) {
            forward.at(i);
            ok = ok && same(a[i], i);
        }
        QVERIFY(ok);
        Entries::Walk backward(a);
        for (std::size_t i = n; i-- > 0;) {
            backward.at(i);
            ok = ok && same(a[i], i);
        }
        QVERIFY(ok);
        a.forget(0, n);
        QVERIFY(same(early, 17));
        QVERIFY(same(*middle, n / 2));
        QVERIFY(same(a.back(), n - 1));
        QVERIFY(same(a.at(n - 2), n - 2));
        QVERIFY_THROWS_EXCEPTION(std::out_of_range, a.at(n));
        // Written in place, kept through a forget.
        a[n - 3].size = 99;
        a.forget(0, n);
        QCOMPARE(a[n - 3].size, std::uint64_t{99});
        // The file has no name: the directory stays empty while it is in use.
        QCOMPARE(testfiles::SpillSetting::filesIn(tmp.path()), QStringList());
    }

    // The writer leaves a window or two resident behind and ahead of it, however much it writes
    // and whatever its values' size; the file is mapped from a huge-page boundary, and release()
    // drops whole 2 MiB units, so each release of the writer's must start where the last one
    // stopped, not where it was asked to (values of 1,000,000 bytes: the writer's windows end
    // at a different place in a unit each time).
    void theWriterLeavesAWindowResident() {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const testfiles::SpillSetting spill(4096, tmp.path());
        struct Block {
            std::array<unsigned char, 1'000'000> bytes;
        };
        constexpr std::size_t n = 96;  // 96 MB
        alloc::SpillArray<Block> a;
        auto value = std::make_unique<Block>();
        auto fill = [&](std::size_t i) {
            value->bytes.fill(static_cast<unsigned char>(i));
            a.push_back(*value);
        };
        for (std::size_t i = 0; i < 8; ++i) fill(i);
        QVERIFY(a.spilled());
        QCOMPARE(reinterpret_cast<std::uintptr_t>(a.data()) % alloc::SpillFile::kReleaseBytes, std::uintptr_t{0});
        const std::size_t before = residentFileBytes();
        std::size_t peak = before;
        for (std::size_t i = 8; i < n; ++i) {
            fill(i);
            peak = std::max(peak, residentFileBytes());
        }
        QVERIFY2(peak < before + (24u << 20), qPrintable(QString("writer: %1 MB more resident").arg((peak - before) >> 20)));
        a.doneWriting();
        bool ok = true;
        for (std::size_t i = 0; i < n; ++i) ok = ok && a[i].bytes[i * 7919 % 1'000'000] == static_cast<unsigned char>(i);
        QVERIFY(ok);
    }

    // A walk leaves at most a window or two resident; reading without one keeps every page.
    void aWalkKeepsTheResidentSetBounded() {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const testfiles::SpillSetting spill(4096, tmp.path());
        constexpr std::size_t n = 3'000'000;  // 72 MB
        Entries a;
        for (std::size_t i = 0; i < n; ++i) a.push_back(entry(i));
        a.forget(0, n);
        const std::size_t before = residentFileBytes();
        std::uint64_t sum = 0;
        Entries::Walk walk(a);
        std::size_t peak = before;
        for (std::size_t i = 0; i < n; ++i) {
            walk.at(i);
            sum += a[i].size;
            if (i % 65536 == 0) peak = std::max(peak, residentFileBytes());
        }
        QVERIFY2(peak - before < (24u << 20), qPrintable(QString("walk: %1 MB resident").arg((peak - before) >> 20)));
        a.forget(0, n);
        const std::size_t reset = residentFileBytes();
        for (std::size_t i = 0; i < n; ++i) sum += a[i].size;
        const std::size_t unbounded = residentFileBytes();
        QVERIFY2(unbounded - reset > (48u << 20), qPrintable(QString("no walk: %1 MB resident").arg((unbounded - reset) >> 20)));
        QVERIFY(sum > 0);
    }

    // The placement models a checked replay builds first (`allocscope-cli replay`, the GUI's
    // what-if) read the whole trace: they walk it too, and a finished array keeps nothing resident
    // ahead of its end (SpillArray::doneWriting).
    void placementModelsWalkASpilledTrace() {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const testfiles::SpillSetting spill(4096, tmp.path());
        alloc::RecordedTrace trace = segmentOfSmallTensors(750'000);  // 1.5 M entries, 72 MB
        QVERIFY(trace.entries.spilled());
        trace.entries.doneWriting();
        trace.entries.forget(0, trace.entries.size());
        const std::size_t before = residentFileBytes();
        const alloc::ReferencePlacement reference(trace);
        const std::size_t afterReference = residentFileBytes();
        (void)alloc::HiddenRangeCalibration::fromRecording(trace);
        const std::size_t afterCalibration = residentFileBytes();
        QVERIFY2(afterReference < before + (24u << 20),
                 qPrintable(QString("%1 MB resident after ReferencePlacement").arg((afterReference - before) >> 20)));
        QVERIFY2(afterCalibration < before + (24u << 20),
                 qPrintable(QString("%1 MB resident after the calibration").arg((afterCalibration - before) >> 20)));
        QCOMPARE(reference.segmentAllocs().size(), std::size_t(1));
    }

    // A comparison of a big trace (`allocscope-cli compare TRACE`, the GUI's Compare) turns it
    // into a program of as many ops and runs that under each config: the ops spill like the
    // entries, and both the conversion and the runs walk them (1 GB snapshot: 817 MB -> 108 MB).
    void aBigTracesProgramIsWalked() {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const testfiles::SpillSetting spill(4096, tmp.path());
        alloc::RecordedTrace trace = segmentOfSmallTensors(400'000);  // 1.2 M entries, 58 MB; 800,000 ops, 38 MB
        trace.entries.doneWriting();
        trace.entries.forget(0, trace.entries.size());
        const std::size_t before = residentFileBytes();
        alloc::ProgramFromTraceOptions options;
        options.totalMemory = 80ull << 30;
        const alloc::Program program = alloc::programFromTrace(trace, options);
        const std::size_t afterConversion = residentFileBytes();
        QCOMPARE(program.ops.size(), std::size_t(800'000));
        QVERIFY(program.ops.spilled());
        QVERIFY2(afterConversion < before + (32u << 20),
                 qPrintable(QString("%1 MB resident after the conversion").arg((afterConversion - before) >> 20)));
        alloc::SimulatedDevice device(80ull << 30, 0);
        alloc::CachingAllocator allocator(alloc::AllocatorConfig{}, device);
        alloc::ProgramRunner runner(allocator);
        program.ops.forget(0, program.ops.size());
        const std::size_t beforeRun = residentFileBytes();
        const alloc::ProgramResult result = runner.run(program);
        const std::size_t afterRun = residentFileBytes();
        QVERIFY(result.ok());
        QCOMPARE(allocator.stats().allocation[alloc::kAggregate].allocated, std::int64_t(400'000));
        QVERIFY2(afterRun < beforeRun + (24u << 20),
                 qPrintable(QString("%1 MB resident after the run").arg((afterRun - beforeRun) >> 20)));
    }

    void copiesMovesAndEdits() {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const testfiles::SpillSetting spill(4096, tmp.path());
        Entries a;
        for (std::size_t i = 0; i < 10'000; ++i) a.push_back(entry(i));
        QVERIFY(a.spilled());
        Entries b = a;  // a copy of its own, in a file of its own
        QVERIFY(b.spilled());
        b[0].size = 5;
        QVERIFY(same(a[0], 0));
        Entries c = std::move(b);
        QCOMPARE(c.size(), std::size_t{10'000});
        QCOMPARE(c[0].size, std::uint64_t{5});
        QVERIFY(same(c[9'999], 9'999));
        c.erase(c.begin(), c.begin() + 100);
        QCOMPARE(c.size(), std::size_t{9'900});
        QVERIFY(same(c[0], 100));
        c.clear();
        for (std::size_t i = 0; i < 3; ++i) c.push_back(entry(i + 1));
        QVERIFY(same(c[2], 3));
        const std::vector<alloc::RecordedEntry> plain{entry(4), entry(5)};
        c = plain;
        QCOMPARE(c.size(), std::size_t{2});
        QVERIFY(same(c.back(), 5));
    }

    // A disk without room (here: a file size limit of 16 MiB) stops the growth with an exception
    // that says what and where, before a page is written (a mapped page without a block would
    // raise SIGBUS and kill the process); what was stored before reads back.
    void aFullDiskIsAnError() {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const testfiles::SpillSetting spill(4096, tmp.path());
        rlimit old{};
        QCOMPARE(::getrlimit(RLIMIT_FSIZE, &old), 0);
        void (*oldHandler)(int) = std::signal(SIGXFSZ, SIG_IGN);  // EFBIG instead of the signal
        rlimit small = old;
        small.rlim_cur = 16u << 20;
        QCOMPARE(::setrlimit(RLIMIT_FSIZE, &small), 0);
        Entries a;
        std::string error;
        try {
            for (std::size_t i = 0; i < 200; ++i) a.push_back(entry(i));  // past the 4 KiB threshold
        } catch (const std::runtime_error& e) {
            error = e.what();
        }
        ::setrlimit(RLIMIT_FSIZE, &old);
        std::signal(SIGXFSZ, oldHandler);
        QVERIFY2(error.find("no room for 64 MiB of temporary data in " + tmp.path().toStdString()) != std::string::npos, error.c_str());
        QVERIFY(error.find("TMPDIR") != std::string::npos);
        QVERIFY(!a.empty());
        bool ok = true;
        for (std::size_t i = 0; i < a.size(); ++i) ok = ok && same(a[i], i);
        QVERIFY(ok);
    }

    // Without a usable temporary directory the array stays in memory and works as before.
    void noTemporaryDirectoryKeepsItInMemory() {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const testfiles::SpillSetting spill(4096, tmp.path() + "/missing");
        Entries a;
        for (std::size_t i = 0; i < 10'000; ++i) a.push_back(entry(i));
        QVERIFY(!a.spilled());
        bool ok = true;
        for (std::size_t i = 0; i < a.size(); ++i) ok = ok && same(a[i], i);
        QVERIFY(ok);
    }
};

QTEST_GUILESS_MAIN(TestSpillArray)
#include "TestSpillArray.moc"
