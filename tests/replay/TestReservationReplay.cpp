// Expandable reservations replayed on the device they came from. PyTorch 2.11 reserves 9/8 of
// the device's total memory per expandable segment (ExpandableSegment: max_handles_ =
// ceil((totalGlobalMem + totalGlobalMem / 8) / segment_size_)), and a snapshot does not record
// that total. A recording from a card a little smaller than the replay's default H100 places its
// next reservation where the H100's first one still is; the replay must see that the recording's
// reservations are smaller and replay on a device they allow. Hand-made 3-device snapshots
// (written with PickleWriter, laid out as the driver lays a process's reservations out: upward,
// in 32 MiB chunks, the devices sharing one address space), and the field recording that showed
// it (../shared/field-snapshots, skipped where absent).
#include <QtTest>

#include <cstdint>
#include <string>
#include <vector>

#include "ReplayTestData.h"
#include "allocator/config/ConfigParser.h"
#include "allocator/core/ReservationSize.h"
#include "allocator/replay/ReplayVerdict.h"
#include "allocator/replay/TraceReplayer.h"
#include "storage/formats/PickleWriter.h"
#include "storage/import/TraceFile.h"

using namespace allocscope;
using namespace allocscope::alloc;

namespace {

constexpr std::uint64_t MiB = 1024ull * 1024ull;
constexpr std::uint64_t GiB = 1024ull * MiB;
constexpr std::uint64_t kH100 = 85'017'493'504ull;  // ReplayOptions' default device
constexpr std::uint64_t kSideStream = 0x5566'7788'99aaull;

// PyTorch's reservation, written out here rather than taken from ReservationSize (which the
// suite checks): whole pages covering totalGlobalMem + totalGlobalMem / 8.
std::uint64_t reservation(std::uint64_t total, std::uint64_t page) { return (total + total / 8 + page - 1) / page * page; }
std::uint64_t chunkUp(std::uint64_t address) { return (address + 32 * MiB - 1) / (32 * MiB) * (32 * MiB); }

formats::TraceEntry entry(const std::string& action, std::uint64_t addr, std::uint64_t size, std::uint64_t stream = 0) {
    formats::TraceEntry e;
    e.action = action;
    e.addr = addr;
    e.has_addr = true;
    e.size = size;
    e.stream = stream;
    return e;
}

formats::TraceEntry oomEntry(std::uint64_t size, std::uint64_t deviceFree) {
    formats::TraceEntry e;
    e.action = "oom";
    e.size = size;
    e.device_free = deviceFree;
    e.has_device_free = true;
    return e;
}

formats::SnapshotBlock block(std::uint64_t address, std::uint64_t size, std::uint64_t requested, bool allocated) {
    formats::SnapshotBlock b;
    b.address = address;
    b.size = size;
    b.requested_size = allocated ? requested : 0;
    b.state = allocated ? "active_allocated" : "inactive";
    return b;
}

formats::SnapshotSegment segment(std::int64_t device, std::uint64_t address, bool small, std::uint64_t stream,
                                 std::vector<formats::SnapshotBlock> blocks) {
    formats::SnapshotSegment s;
    s.device = device;
    s.address = address;
    s.stream = stream;
    s.segment_type = small ? "small" : "large";
    s.is_expandable = true;
    for (const formats::SnapshotBlock& b : blocks) {
        s.total_size += b.size;
        if (b.state == "active_allocated") {
            s.allocated_size += b.size;
            s.active_size += b.size;
            s.requested_size += b.requested_size;
        }
    }
    s.blocks = std::move(blocks);
    return s;
}

// Three GPUs of `total` bytes in one process under expandable_segments:True. Each device maps a
// large reservation (a 30 MiB tensor: two 20 MiB pages) and then a small one (512 B: one 2 MiB
// page), each placed right after the reservation before it (rounded up to the driver's 32 MiB
// chunks). Device 1 then maps 60 GiB and fails on 30 GiB more (a recorded OOM). Device 2 also
// allocates on a second stream, which gets a reservation of its own above its small one; that
// tensor is freed and empty_cache() unmaps the reservation's only pages (a map the final
// segments do not show) and destroys it, and the next tensor of that stream gets a new
// reservation at the same base (reference §18.1).
formats::Snapshot threeDevices(std::uint64_t total) {
    const std::uint64_t large = reservation(total, 20 * MiB);
    const std::uint64_t small = reservation(total, 2 * MiB);
    formats::Snapshot snap;
    snap.allocator_settings.present = true;
    snap.allocator_settings.conf = "expandable_segments:True";
    snap.allocator_settings.expandable_segments = true;
    snap.device_traces.resize(3);
    std::uint64_t next = 0x602000000ull;  // where the process's first reservation went
    for (std::int64_t d = 0; d < 3; ++d) {
        const std::uint64_t l = next;
        const std::uint64_t s = chunkUp(l + large);
        next = chunkUp(s + small);
        std::vector<formats::TraceEntry>& t = snap.device_traces[static_cast<std::size_t>(d)];
        t = {entry("segment_map", l, 40 * MiB), entry("alloc", l, 30 * MiB), entry("segment_map", s, 2 * MiB),
             entry("alloc", s, 512)};
        std::vector<formats::SnapshotBlock> largeBlocks = {block(l, 30 * MiB, 30 * MiB, true)};
        std::uint64_t largeEnd = l + 40 * MiB;
        if (d == 1) {
            // 60 GiB: the 10 MiB free tail and 3072 more pages; the free tail is what is left.
            t.push_back(entry("segment_map", l + 40 * MiB, 60 * GiB));
            t.push_back(entry("alloc", l + 30 * MiB, 60 * GiB));
            largeBlocks.push_back(block(l + 30 * MiB, 60 * GiB, 60 * GiB, true));
            largeEnd += 60 * GiB;
            t.push_back(oomEntry(30 * GiB, 19'000'000'000ull));
        }
        largeBlocks.push_back(block(largeEnd - 10 * MiB, 10 * MiB, 0, false));
        snap.segments.push_back(segment(d, l, false, 0, std::move(largeBlocks)));
        snap.segments.push_back(segment(d, s, true, 0, {block(s, 512, 512, true), block(s + 512, 2 * MiB - 512, 0, false)}));
        if (d == 2) {
            const std::uint64_t x = next;
            t.push_back(entry("segment_map", x, 40 * MiB, kSideStream));
            t.push_back(entry("alloc", x, 30 * MiB, kSideStream));
            t.push_back(entry("free_requested", x, 30 * MiB, kSideStream));
            t.push_back(entry("free_completed", x, 30 * MiB, kSideStream));
            t.push_back(entry("segment_unmap", x, 40 * MiB, kSideStream));
            t.push_back(entry("segment_map", x, 40 * MiB, kSideStream));
            t.push_back(entry("alloc", x, 30 * MiB, kSideStream));
            snap.segments.push_back(segment(d, x, false, kSideStream,
                                            {block(x, 30 * MiB, 30 * MiB, true), block(x + 30 * MiB, 10 * MiB, 0, false)}));
        }
    }
    return snap;
}

std::vector<RecordedTrace> written(const formats::Snapshot& snap, const QTemporaryDir& dir) {
    const std::string path = dir.filePath("three_devices.pickle").toStdString();
    formats::PickleWriter::writeFile(snap, path);
    return storage::TraceFile::read(path).traces;
}

ReplayOptions recordedOptions(const RecordedTrace& trace) {
    ReplayOptions options;
    const ParseResult parsed = parseConfig(trace.settings.value_or(""));
    if (!parsed.accepted()) qFatal("the recording's settings do not parse");
    options.config = parsed.config;
    return options;
}

}  // namespace

class TestReservationReplay : public QObject {
    Q_OBJECT

private slots:
    // PyTorch's rule on the shared H100 traces' device: a large reservation of 4561 pages
    // (0x1645400000 B; their next reservation lies 0x1646000000 above, one 32 MiB chunk up), and
    // the largest device whose large reservation fits in 0x1644000000 B: 4560 pages exactly.
    void reservationSize() {
        QCOMPARE(ReservationSize::of(kH100, 20 * MiB), 0x1645400000ull);
        QCOMPARE(ReservationSize::of(kH100, 2 * MiB), 0x1644e00000ull);
        const std::uint64_t fits = ReservationSize::largestTotalWithin(0x1644000000ull, 20 * MiB);
        QCOMPARE(fits, 85'004'561'067ull);
        QCOMPARE(ReservationSize::of(fits, 20 * MiB), 0x1644000000ull);
        QVERIFY(ReservationSize::of(fits + 1, 20 * MiB) > 0x1644000000ull);
        // Bytes that are not whole pages count down to whole pages.
        QCOMPARE(ReservationSize::largestTotalWithin(0x1644000000ull + 19 * MiB, 20 * MiB), fits);
        QCOMPARE(ReservationSize::largestTotalWithin(0, 2 * MiB), std::uint64_t{0});
    }

    // A recording from a device of 84,970,000,000 B replayed on the default H100: every device's
    // small reservation lies inside the H100's large one, and device 2's side-stream reservation
    // inside the H100's small one. Each device replays exactly on a device its reservations allow
    // (device 2 after two moves: the second bound is the small page's), device 1's OOM included,
    // and says so.
    void smallerDeviceReplaysExactly() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::uint64_t recordedTotal = 84'970'000'000ull;
        const std::vector<RecordedTrace> traces = written(threeDevices(recordedTotal), dir);
        QCOMPARE(traces.size(), std::size_t{3});
        for (const RecordedTrace& trace : traces) {
            const ReplayOptions options = recordedOptions(trace);
            const ReplayResult result = TraceReplayer::replay(trace, options);
            const QByteArray what = QByteArray("device ") + QByteArray::number(static_cast<qlonglong>(trace.device)) + ": " +
                                    QByteArray::fromStdString(replayVerdict(result, trace.entries.size()));
            QVERIFY2(result.exact(), what.constData());
            // The device it ran on holds the recording's reservations where they were ...
            QVERIFY2(result.totalMemory < kH100, what.constData());
            QVERIFY(ReservationSize::of(result.totalMemory, 20 * MiB) <= reservation(recordedTotal, 20 * MiB) + 20 * MiB);
            // ... and leaves the allocator the memory the options gave it.
            QCOMPARE(result.totalMemory - result.otherMemory, options.totalMemory - options.otherMemory);
            bool noted = false;
            for (const std::string& note : result.notes) noted = noted || note.find("expandable reservations") != std::string::npos;
            QVERIFY2(noted, what.constData());
            if (trace.device == 1) QCOMPARE(result.stats.num_ooms, std::uint64_t{1});
            if (trace.device == 2) QVERIFY(result.totalMemory <= ReservationSize::largestTotalWithin(0x1642000000ull, 2 * MiB));
        }
    }

    // The recording's own device, given: nothing to move, the same exact replays.
    void recordedDeviceStays() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::uint64_t recordedTotal = 84'970'000'000ull;
        for (const RecordedTrace& trace : written(threeDevices(recordedTotal), dir)) {
            ReplayOptions options = recordedOptions(trace);
            options.totalMemory = recordedTotal;
            const ReplayResult result = TraceReplayer::replay(trace, options);
            QVERIFY2(result.exact(), replayVerdict(result, trace.entries.size()).c_str());
            QCOMPARE(result.totalMemory, recordedTotal);
            QCOMPARE(result.otherMemory, options.otherMemory);
            QVERIFY(result.notes.empty());
        }
    }

    // A recording from the default device itself: its reservations fit, nothing moves.
    void defaultDeviceRecordingStays() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        for (const RecordedTrace& trace : written(threeDevices(kH100), dir)) {
            const ReplayResult result = TraceReplayer::replay(trace, recordedOptions(trace));
            QVERIFY2(result.exact(), replayVerdict(result, trace.entries.size()).c_str());
            QCOMPARE(result.totalMemory, kH100);
        }
    }

    // A device too small for the recording is no reason to move: a larger reservation is not what
    // the rule reads (only the recording's next reservation inside the replay's bounds it).
    void largerRecordedDeviceIsNotMoved() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::vector<RecordedTrace> traces = written(threeDevices(150'754'820'096ull), dir);  // an H200's
        const ReplayResult result = TraceReplayer::replay(traces.at(0), recordedOptions(traces.at(0)));
        QVERIFY2(result.exact(), replayVerdict(result, traces.at(0).entries.size()).c_str());
        QCOMPARE(result.totalMemory, kH100);
    }

    // The field recording (a 3-GPU job, expandable_segments:True, device 1 ends in an OOM): every
    // device replays exactly on the default device, which its reservations move to 85,004,561,067 B.
    // Device 1 also replays exactly with the limit its OOM entry gives: device_free 95,682,560 B
    // plus the 84,202,749,952 B mapped then plus the H100's context (552,402,944 B), i.e.
    // --total-memory 84850835456; that device's reservations are smaller than the recording's and
    // fit, so it stays as given.
    void fieldRecording() {
        const QString path = replaytest::fieldSnapshot("Constructor-Sun__code_location__memory_snapshot.pickle");
        if (path.isEmpty()) QSKIP("../shared/field-snapshots is not here");
        const std::vector<RecordedTrace> traces = storage::TraceFile::read(path.toStdString()).traces;
        QCOMPARE(traces.size(), std::size_t{3});
        for (const RecordedTrace& trace : traces) {
            const ReplayResult result = TraceReplayer::replay(trace, recordedOptions(trace));
            const QByteArray what = QByteArray("device ") + QByteArray::number(static_cast<qlonglong>(trace.device)) + ": " +
                                    QByteArray::fromStdString(replayVerdict(result, trace.entries.size()));
            QVERIFY2(result.exact(), what.constData());
            QCOMPARE(result.totalMemory, 85'004'561'067ull);
            if (trace.device == 1) QCOMPARE(result.stats.num_ooms, std::uint64_t{1});
        }
        ReplayOptions limited = recordedOptions(traces.at(1));
        limited.totalMemory = 84'850'835'456ull;
        const ReplayResult result = TraceReplayer::replay(traces.at(1), limited);
        QVERIFY2(result.exact(), replayVerdict(result, traces.at(1).entries.size()).c_str());
        QCOMPARE(result.totalMemory, limited.totalMemory);
        QCOMPARE(result.stats.num_ooms, std::uint64_t{1});
    }
};

QTEST_GUILESS_MAIN(TestReservationReplay)
#include "TestReservationReplay.moc"
