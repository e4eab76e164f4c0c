// storage/import: a snapshot or an RMM log becomes the allocator's RecordedTrace(s) -- one per
// device, the device's own segments as the final layout, annotations as phase marks placed by
// time, legacy "free" split in two -- and bad input is a FormatError that names the entry.
#include <QtTest>

#include <algorithm>

#include "allocator/replay/TraceReplayer.h"
#include "storage/formats/FormatError.h"
#include "storage/import/TraceImport.h"

using namespace allocscope;

namespace {

formats::TraceEntry entry(const std::string& action, std::uint64_t addr, std::uint64_t size, std::int64_t time) {
    formats::TraceEntry e;
    e.action = action;
    e.addr = addr;
    e.has_addr = true;
    e.size = size;
    e.time_us = time;
    return e;
}

formats::SnapshotSegment segment(std::int64_t device, std::uint64_t address, std::uint64_t size, const std::string& state) {
    formats::SnapshotSegment s;
    s.device = device;
    s.address = address;
    s.total_size = size;
    s.segment_type = "large";
    formats::SnapshotBlock b;
    b.address = address;
    b.size = size;
    b.state = state;
    s.blocks.push_back(b);
    return s;
}

formats::Snapshot twoDevices() {
    formats::Snapshot snap;
    snap.allocator_settings.present = true;
    snap.allocator_settings.conf = "max_split_size_mb:128";
    snap.device_traces.resize(2);
    snap.device_traces[0] = {entry("segment_alloc", 0x1000, 20971520, 10), entry("alloc", 0x1000, 4096, 20),
                             entry("free", 0x1000, 4096, 30)};
    formats::TraceEntry oom;
    oom.action = "oom";
    oom.size = 2097152;
    oom.device_free = 12345;
    oom.has_device_free = true;
    oom.time_us = 40;
    snap.device_traces[1] = {entry("segment_alloc", 0x9000, 2097152, 5), oom, entry("annotate", 0x9000, 0, 41)};
    snap.segments = {segment(1, 0x9000, 2097152, "inactive"), segment(0, 0x1000, 20971520, "inactive"),
                     segment(-1, 0x50, 4096, "active_allocated")};
    snap.external_annotations = {{"step", "START", 0, 15}, {"step", "END", 0, 35}, {"other", "START", 1, 0}};
    return snap;
}

}  // namespace

class TestTraceImport : public QObject {
    Q_OBJECT

private slots:
    void oneTracePerDevice() {
        const std::vector<alloc::RecordedTrace> traces = storage::tracesFromSnapshot(twoDevices());
        QCOMPARE(traces.size(), std::size_t{2});
        const alloc::RecordedTrace& d0 = traces[0];
        QCOMPARE(d0.device, std::int64_t{0});
        QCOMPARE(d0.settings.value_or("?"), std::string("max_split_size_mb:128"));
        QVERIFY(d0.hasSegmentEvents);
        // The legacy single "free" becomes free_requested + free_completed.
        QCOMPARE(d0.entries.size(), std::size_t{4});
        QCOMPARE(d0.entries[2].action, alloc::EventAction::FreeRequested);
        QCOMPARE(d0.entries[3].action, alloc::EventAction::FreeCompleted);
        QCOMPARE(d0.entries[3].address, std::uint64_t{0x1000});
        // Only this device's segments (not device 1's, not the host's).
        QCOMPARE(d0.finalSegments->size(), std::size_t{1});
        QCOMPARE(d0.finalSegments->front().address, std::uint64_t{0x1000});
        // Phase marks: START at 15 falls before the alloc (time 20), END at 35 after everything.
        QCOMPARE(d0.phases.size(), std::size_t{2});
        QCOMPARE(d0.phases[0].entryIndex, std::size_t{1});
        QVERIFY(d0.phases[0].begin);
        QCOMPARE(d0.phases[1].entryIndex, std::size_t{4});
        QVERIFY(!d0.phases[1].begin);

        const alloc::RecordedTrace& d1 = traces[1];
        QCOMPARE(d1.device, std::int64_t{1});
        QCOMPARE(d1.entries.size(), std::size_t{2});  // the annotate entry carries no decision
        QCOMPARE(d1.entries[1].action, alloc::EventAction::Oom);
        QCOMPARE(d1.entries[1].deviceFree, std::uint64_t{12345});
        QCOMPARE(d1.entries[1].size, std::uint64_t{2097152});
        QCOMPARE(d1.phases.size(), std::size_t{1});
    }

    void rmmLog() {
        formats::RmmLog log;
        log.records = {{1, "t", formats::RmmAction::Allocate, 0x2000, 512, 0, 2},
                       {1, "t", formats::RmmAction::AllocateFailure, 0, 1 << 30, 0, 3},
                       {1, "t", formats::RmmAction::Free, 0x2000, 512, 0, 4}};
        const alloc::RecordedTrace t = storage::traceFromRmmLog(log);
        QVERIFY(!t.hasSegmentEvents);
        QVERIFY(!t.settings.has_value());
        QVERIFY(!t.finalSegments.has_value());
        QCOMPARE(t.entries.size(), std::size_t{4});
        QCOMPARE(t.entries[1].action, alloc::EventAction::Oom);
        QCOMPARE(t.entries[2].action, alloc::EventAction::FreeRequested);
        QCOMPARE(t.entries[3].action, alloc::EventAction::FreeCompleted);
    }

    void badInput_data() {
        QTest::addColumn<int>("kind");
        QTest::addColumn<QString>("where");
        QTest::newRow("unknown action") << 0 << "device_traces[0][1]";
        QTest::newRow("missing addr") << 1 << "device_traces[0][0]";
        QTest::newRow("unknown block state") << 2 << "segments[0].blocks[0]";
        QTest::newRow("unknown segment type") << 3 << "segments[0]";
    }
    void badInput() {
        QFETCH(int, kind);
        QFETCH(QString, where);
        formats::Snapshot snap;
        snap.device_traces.resize(1);
        snap.device_traces[0] = {entry("segment_alloc", 0x1000, 2097152, 1), entry("alloc", 0x1000, 512, 2)};
        if (kind == 0) snap.device_traces[0][1].action = "allocate";
        if (kind == 1) snap.device_traces[0][0].has_addr = false;
        if (kind == 2) snap.segments = {segment(0, 0x1000, 2097152, "busy")};
        if (kind == 3) {
            snap.segments = {segment(0, 0x1000, 2097152, "inactive")};
            snap.segments[0].segment_type = "huge";
        }
        try {
            storage::tracesFromSnapshot(snap);
            QFAIL("bad input was accepted");
        } catch (const formats::FormatError& e) {
            QCOMPARE(QString::fromStdString(e.location()), where);
        }
    }

    // The shared train_gpt trace carries 20 record_function markers: they become Phase ops.
    void phasesOfRealTrace() {
        const QString path = QString::fromLocal8Bit(qgetenv("ALLOCSCOPE_TEST_DATA")) + "/traces/train_gpt__default.pickle";
        const auto traces = storage::importTraceFile(path.toStdString());
        QCOMPARE(traces.size(), std::size_t{1});
        QCOMPARE(traces.front().phases.size(), std::size_t{20});
        std::size_t begins = 0;
        for (const alloc::PhaseMark& m : traces.front().phases) begins += m.begin;
        QCOMPARE(begins, std::size_t{10});
        // The replay turns them into Phase ops of the program, named by their labels.
        alloc::ReplayOptions options;
        const alloc::ReplayResult r = alloc::TraceReplayer::replay(traces.front(), options);
        std::size_t phases = 0;
        for (const alloc::Op& op : r.program.ops) phases += op.kind == alloc::OpKind::Phase;
        QCOMPARE(phases, std::size_t{20});
        QVERIFY(std::find(r.program.labels.begin(), r.program.labels.end(), "Optimizer.step#AdamW.step") !=
                r.program.labels.end());
    }
};

QTEST_GUILESS_MAIN(TestTraceImport)
#include "TestTraceImport.moc"
