// The storage/allocator -> view-data adapters on states whose answer is known: a real allocator's
// layout (split blocks, rounding, pending free, expandable pages), a hand-made heatmap grid and
// timeline, and the statistics' summary text.
#include <QtTest>

#include <optional>

#include "allocator/config/ConfigParser.h"
#include "allocator/core/CachingAllocator.h"
#include "allocator/core/MemorySummary.h"
#include "allocator/device/SimulatedDevice.h"
#include "app/gui/ViewDataAdapters.h"
#include "storage/import/FrameLine.h"
#include "views/widgets/RunListModel.h"

using namespace allocscope;

namespace {
constexpr std::uint64_t MiB = 1024 * 1024;
}

class TestViewDataAdapters : public QObject {
    Q_OBJECT
private slots:
    void segmentMapKeepsBlocksStatesAndRequestedBytes() {
        alloc::SimulatedDevice device(80ull * 1024 * MiB, 0);
        alloc::CachingAllocator allocator(alloc::AllocatorConfig{}, device);
        // 3 MiB + 1 byte rounds to 3 MiB + 512; in a 20 MiB segment (large pool, <10 MiB request).
        const auto a = allocator.malloc(3 * MiB + 1, 0);
        const auto b = allocator.malloc(4 * MiB, 0);
        QVERIFY(a && b);
        QVERIFY(allocator.recordStream(*b, 7));
        QVERIFY(allocator.free(*b));  // pending: used on stream 7
        const views::SegmentMapData data = app::toSegmentMapData(allocator.segments());
        QCOMPARE(data.segments.size(), std::size_t{1});
        const views::ViewSegment& seg = data.segments[0];
        QCOMPARE(seg.totalSize, quint64{20 * MiB});
        QCOMPARE(seg.pool, views::PoolKind::Large);
        QVERIFY(!seg.expandable);
        QCOMPARE(seg.blocks.size(), std::size_t{3});
        QCOMPARE(seg.blocks[0].state, views::BlockState::Allocated);
        QCOMPARE(seg.blocks[0].address, *a);
        QCOMPARE(seg.blocks[0].size, quint64{3 * MiB + 512});
        QCOMPARE(seg.blocks[0].requestedSize, quint64{3 * MiB + 1});
        QCOMPARE(seg.blocks[1].state, views::BlockState::PendingFree);
        QCOMPARE(seg.blocks[1].requestedSize, quint64{4 * MiB});
        QCOMPARE(seg.blocks[2].state, views::BlockState::Inactive);
        QCOMPARE(seg.blocks[2].requestedSize, quint64{0});  // stale for cached blocks
        quint64 covered = 0;
        for (const auto& block : seg.blocks) covered += block.size;
        QCOMPARE(covered, seg.totalSize);
    }

    void expandableRangesBecomeOneRowWithUnmappedPages() {
        // Two mapped ranges of one reservation, as PyTorch lists them, with 40 MiB unmapped between.
        alloc::SegmentInfo first;
        first.address = 0x7f0000000000;
        first.totalSize = 20 * MiB;
        first.isExpandable = true;
        first.blocks.push_back({first.address, 20 * MiB, 20 * MiB, alloc::BlockState::ActiveAllocated, 0});
        alloc::SegmentInfo second = first;
        second.address = first.address + 60 * MiB;
        second.blocks = {{second.address, 20 * MiB, 0, alloc::BlockState::Inactive, 0}};
        alloc::SegmentInfo other = second;  // another stream: its own reservation
        other.address = first.address + 200 * MiB;
        other.stream = 5;
        other.blocks = {{other.address, 20 * MiB, 0, alloc::BlockState::Inactive, 0}};
        const views::SegmentMapData data = app::toSegmentMapData({first, second, other});
        QCOMPARE(data.segments.size(), std::size_t{2});
        const views::ViewSegment& row = data.segments[0];
        QVERIFY(row.expandable);
        QCOMPARE(row.totalSize, quint64{80 * MiB});
        QCOMPARE(row.blocks.size(), std::size_t{3});
        QCOMPARE(row.blocks[1].state, views::BlockState::Unmapped);
        QCOMPARE(row.blocks[1].address, first.address + 20 * MiB);
        QCOMPARE(row.blocks[1].size, quint64{40 * MiB});
        QCOMPARE(data.segments[1].stream, qint64{5});
    }

    void expandableAllocatorLayoutCoversItsRows() {
        alloc::SimulatedDevice device(80ull * 1024 * MiB, 0);
        const alloc::ParseResult parsed = alloc::parseConfig("expandable_segments:True");
        QVERIFY(parsed.accepted());
        alloc::CachingAllocator allocator(parsed.config, device);
        std::vector<std::uint64_t> blocks;
        for (int i = 0; i < 4; ++i) blocks.push_back(*allocator.malloc(30 * MiB, 0));
        allocator.free(blocks[1]);
        allocator.free(blocks[2]);
        allocator.emptyCache();  // unmaps the free pages in the middle
        const views::SegmentMapData data = app::toSegmentMapData(allocator.segments());
        QCOMPARE(data.segments.size(), std::size_t{1});
        bool sawUnmapped = false;
        quint64 covered = 0;
        for (const auto& block : data.segments[0].blocks) {
            covered += block.size;
            sawUnmapped = sawUnmapped || block.state == views::BlockState::Unmapped;
        }
        QVERIFY(sawUnmapped);
        QCOMPARE(covered, data.segments[0].totalSize);
    }

    void heatmapSharesAndAxis() {
        storage::HeatmapGrid grid;
        grid.columns = 2;
        grid.rows = 2;
        grid.columnEvents = {0, 50};
        grid.axis = {{0x1000, 0x100, 0}, {0x9000, 0x100, 0x100}};
        grid.axisBytes = 0x200;
        using storage::HeatShare;
        grid.plane(HeatShare::Requested) = {255, 0, 60, 10};
        grid.plane(HeatShare::RoundingWaste) = {0, 0, 40, 0};
        grid.plane(HeatShare::Inactive) = {0, 255, 100, 250};
        grid.plane(HeatShare::PendingFree) = {0, 0, 20, 0};
        grid.plane(HeatShare::Unmapped) = {0, 0, 30, 200};  // last cell: over 255 in all is cut
        const views::HeatmapData data = app::toHeatmapData(grid, 120);
        QVERIFY(data.isValid());
        QCOMPARE(data.eventCount, qint64{120});
        QCOMPARE(data.columnFirstEvent, (std::vector<qint64>{0, 50}));
        auto share = [&](int t, int a, views::HeatState s) { return data.cell(t, a)[static_cast<std::size_t>(s)]; };
        QCOMPARE(share(0, 0, views::HeatState::Requested), quint8{255});
        QCOMPARE(share(0, 1, views::HeatState::Inactive), quint8{255});
        QCOMPARE(share(1, 0, views::HeatState::Requested), quint8{60});
        QCOMPARE(share(1, 0, views::HeatState::RoundingWaste), quint8{40});
        QCOMPARE(share(1, 0, views::HeatState::Inactive), quint8{100});
        QCOMPARE(share(1, 0, views::HeatState::PendingFree), quint8{20});
        QCOMPARE(share(1, 0, views::HeatState::Unmapped), quint8{30});
        QCOMPARE(share(1, 1, views::HeatState::Requested), quint8{10});
        QCOMPARE(share(1, 1, views::HeatState::Inactive), quint8{245});  // cut at 255 in all
        QCOMPARE(share(1, 1, views::HeatState::Unmapped), quint8{0});
        QCOMPARE(data.ranges.size(), std::size_t{2});
        QCOMPARE(data.ranges[0].gapBefore, quint64{0});
        QCOMPARE(data.ranges[1].gapBefore, quint64{0x9000 - 0x1100});
        // A grid whose arrays do not match its size is refused, not read out of bounds.
        grid.plane(storage::HeatShare::PendingFree).pop_back();
        QVERIFY(!app::toHeatmapData(grid, 120).isValid());
    }

    void timelineBucketsAndFragmentation() {
        storage::Timeline timeline;
        storage::TimelineBucket b;
        b.firstSeq = 0;
        b.lastSeq = 9;
        b.allocated = {10, 30};
        b.reserved = {40, 40};
        b.active = {10, 35};
        b.requested = {9, 29};
        timeline.buckets.push_back(b);
        const views::TimelineData data = app::toTimelineData(timeline);
        QCOMPARE(data.buckets.size(), std::size_t{1});
        QCOMPARE(data.buckets[0].lastEvent, qint64{9});
        QCOMPARE(data.buckets[0].bytes[static_cast<int>(views::TimelineMetric::Reserved)].max, qint64{40});
        QCOMPARE(data.buckets[0].bytes[static_cast<int>(views::TimelineMetric::Requested)].min, qint64{9});
        QCOMPARE(data.buckets[0].fragmentation, 0.25);
    }

    void markersByCauseOnePerSweep() {
        std::vector<alloc::Event> events;
        const auto make = [&events](alloc::EventAction action, alloc::EventCause cause, std::uint64_t op) {
            alloc::Event e;
            e.seq = events.size();
            e.opIndex = op;
            e.action = action;
            e.cause = cause;
            e.size = 20 * MiB;
            events.push_back(e);
        };
        make(alloc::EventAction::Alloc, alloc::EventCause::Program, 1);
        make(alloc::EventAction::SegmentFree, alloc::EventCause::EmptyCache, 2);
        make(alloc::EventAction::SegmentFree, alloc::EventCause::EmptyCache, 2);  // same sweep
        make(alloc::EventAction::SegmentFree, alloc::EventCause::Gc, 3);
        make(alloc::EventAction::SegmentFree, alloc::EventCause::OomRetry, 4);
        make(alloc::EventAction::Oom, alloc::EventCause::Program, 4);
        make(alloc::EventAction::SegmentFree, alloc::EventCause::Program, 5);
        std::vector<views::TimelineMarker> markers;
        app::appendTimelineMarkers(events, markers);
        QCOMPARE(markers.size(), std::size_t{4});
        QCOMPARE(markers[0].kind, views::MarkerKind::EmptyCache);
        QCOMPARE(markers[0].event, qint64{1});
        QVERIFY(markers[0].cause.contains("empty_cache"));
        QCOMPARE(markers[1].kind, views::MarkerKind::GarbageCollection);
        QVERIFY(markers[1].cause.contains("garbage collection"));
        QCOMPARE(markers[2].kind, views::MarkerKind::Retry);
        QCOMPARE(markers[3].kind, views::MarkerKind::Oom);
        QCOMPARE(markers[3].event, qint64{5});
    }

    void summaryIsPyTorchsTextAndCompactRows() {
        alloc::SimulatedDevice device(80ull * 1024 * MiB, 0);
        alloc::CachingAllocator allocator(alloc::AllocatorConfig{}, device);
        const auto a = allocator.malloc(100 * MiB, 0);
        allocator.free(*a);
        const views::SummaryTableData data = app::toSummaryTableData(allocator.stats());
        QCOMPARE(data.text, QString::fromStdString(allocator.memorySummary()));
        QCOMPARE(data.rows[0].metric, QString("Allocated memory"));
        QCOMPARE(data.rows[0].current, qint64{0});
        QCOMPARE(data.rows[0].peak, qint64{100 * MiB});
        QCOMPARE(data.rows[3].metric, QString("GPU reserved memory"));
        QCOMPARE(data.rows[3].current, qint64{100 * MiB});
    }

    void runRowsAndInspector() {
        storage::RunRow run;
        run.number = 3;
        run.info.name = "fragmentation-101";
        run.info.config = "expandable_segments:True";
        run.eventCount = 42;
        QCOMPARE(app::toRunListRow(run).peakReserved, qint64{-1});
        run.summary = storage::RunSummary{};
        run.summary->peakReserved = 1234;
        run.summary->numOoms = 2;
        const views::RunListRow row = app::toRunListRow(run);
        QCOMPARE(row.number, 3);
        QCOMPARE(row.config, QString("expandable_segments:True"));
        QCOMPARE(row.peakReserved, qint64{1234});
        QCOMPARE(row.ooms, qint64{2});
        QCOMPARE(row.status, QString("complete"));

        storage::BlockHistory history;
        history.address = 0x1000;
        history.size = 512;
        history.requested = 500;
        alloc::Event alloced;
        alloced.seq = 4;
        alloced.opIndex = 2;
        alloced.segment = 0x1000;
        history.alloc = alloced;
        alloc::Event freed = alloced;
        freed.action = alloc::EventAction::FreeCompleted;
        freed.seq = 9;
        freed.cause = alloc::EventCause::Program;
        history.freeCompleted = freed;
        // A compiled program's frame has no line (storage::FrameLine::kUnknown in the session).
        history.stack = {{"train.py", 12, "forward"}, {"fake_tensor.py", storage::FrameLine::kUnknown, "init_gpu_context"}};
        const views::BlockInspectorData data = app::toBlockInspectorData(history, alloc::BlockState::Inactive);
        QVERIFY(data.valid);
        QCOMPARE(data.requested, quint64{500});
        QCOMPARE(data.state, QString("inactive"));
        QCOMPARE(data.events.size(), std::size_t{2});
        QCOMPARE(data.events[0].action, QString("alloc"));
        QCOMPARE(data.events[1].action, QString("free_completed"));
        QCOMPARE(data.events[1].seq, qint64{9});
        QCOMPARE(data.stack.at(0).function, QString("forward"));
        QCOMPARE(data.stack.at(0).line, std::optional<qint64>(12));
        QCOMPARE(data.stack.at(1).file, QString("fake_tensor.py"));
        QCOMPARE(data.stack.at(1).line, std::optional<qint64>());
        QCOMPARE(app::causeText(alloc::EventCause::Gc, alloc::EventAction::SegmentFree), QString("released by garbage collection"));
    }

    // A run whose recorded history starts mid-run (HistoryStart in the session) is marked in the
    // run list and its tooltip; its restored events are not release markers.
    void runRowMarksAHistoryThatStartsMidRun() {
        storage::RunRow run;
        run.number = 1;
        run.info.name = "ringbuf_train__default.pickle";
        run.historyStart = storage::HistoryStart{71, 3, 68'157'440, false};
        views::RunListModel model;
        model.setRuns({app::toRunListRow(run)});
        const QModelIndex name = model.index(0, views::RunListModel::NameColumn);
        QCOMPARE(model.data(name, Qt::DisplayRole).toString(), QString("ringbuf_train__default.pickle (history starts mid-run)"));
        QCOMPARE(model.data(name, views::RunListModel::SortRole).toString(), QString("ringbuf_train__default.pickle"));
        const QString tip = model.data(name, Qt::ToolTipRole).toString();
        QVERIFY2(tip.contains("History starts mid-run: 3 blocks") && tip.contains("event 71"), qPrintable(tip));
        // Its peak and OOMs count the recorded window only: marked, and the tooltip says why.
        run.summary = storage::RunSummary{};
        run.summary->peakReserved = 1'243'611'136;
        model.setRuns({app::toRunListRow(run)});
        const QModelIndex peak = model.index(0, views::RunListModel::PeakReservedColumn);
        const QModelIndex ooms = model.index(0, views::RunListModel::OomsColumn);
        QVERIFY2(model.data(peak, Qt::DisplayRole).toString().endsWith(" (window)"), qPrintable(model.data(peak, Qt::DisplayRole).toString()));
        QVERIFY(model.data(ooms, Qt::DisplayRole).toString().endsWith(" (window)"));
        QCOMPARE(model.data(peak, views::RunListModel::SortRole).toLongLong(), 1'243'611'136LL);
        QVERIFY(model.data(peak, Qt::ToolTipRole).toString().contains("cannot be compared with whole-run figures"));
        QVERIFY(!model.data(model.index(0, views::RunListModel::EventsColumn), Qt::DisplayRole).toString().contains("window"));
        storage::RunRow whole = run;
        whole.historyStart.reset();
        model.setRuns({app::toRunListRow(whole)});
        QVERIFY(!model.data(peak, Qt::DisplayRole).toString().contains("window"));
        run.historyStart->noHistory = true;
        QVERIFY(app::toRunListRow(run).historyStart.startsWith("no history recorded"));
        run.historyStart.reset();
        QVERIFY(app::toRunListRow(run).historyStart.isEmpty());

        std::vector<alloc::Event> events(1);
        events[0].action = alloc::EventAction::SegmentFree;  // never restored; even so, no marker
        events[0].cause = alloc::EventCause::Restored;
        std::vector<views::TimelineMarker> markers;
        app::appendTimelineMarkers(events, markers);
        QVERIFY(markers.empty());
        QVERIFY(app::causeText(alloc::EventCause::Restored, alloc::EventAction::Alloc).contains("restored"));
    }
};

QTEST_GUILESS_MAIN(TestViewDataAdapters)
#include "TestViewDataAdapters.moc"
