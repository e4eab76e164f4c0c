#include "storage/session/RunBuilder.h"

#include <algorithm>
#include <ctime>

#include "storage/session/AllocationBandTable.h"
#include "storage/session/ByteCodec.h"
#include "storage/session/EventCodec.h"
#include "storage/session/HeatmapTable.h"
#include "storage/session/StateCodec.h"

namespace allocscope::storage {
namespace {

std::string nowUtc() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return text;
}

void storeKeyframe(SqliteDb& db, std::int64_t run, std::uint64_t seq, const SegmentStateModel& model) {
    SqliteStatement stmt = db.prepare("INSERT OR REPLACE INTO keyframe(run, seq, state) VALUES (?, ?, ?)");
    const std::string blob = StateCodec::encodeKeyframe(model);
    stmt.bind(1, run).bind(2, static_cast<std::int64_t>(seq)).bindBlobStatic(3, blob.data(), blob.size());
    stmt.run();
}

}  // namespace

RunBuilder::RunBuilder(const alloc::DeviceStats& initial, std::uint64_t keyframeInterval)
    : keyframeInterval_(keyframeInterval == 0 ? kDefaultKeyframeInterval : keyframeInterval), model_(initial) {
    series_.allocated = initial.allocated_bytes[alloc::kAggregate].current;
    series_.reserved = initial.reserved_bytes[alloc::kAggregate].current;
    series_.active = initial.active_bytes[alloc::kAggregate].current;
    series_.requested = initial.requested_bytes[alloc::kAggregate].current;
    peaks_ = series_.array();
    allocatedAtPeakReserved_ = series_.allocated;
}

std::int64_t RunBuilder::create(SqliteDb& db, const RunInfo& info) {
    SqliteStatement stmt = db.prepare(
        "INSERT INTO run(name, source_kind, source, config, gpu, total_memory, memory_fraction, status, created_at, "
        "event_count, keyframe_interval, initial_stats) VALUES (?, ?, ?, ?, ?, ?, ?, 'recording', ?, 0, ?, ?)");
    const std::string stats = StateCodec::encodeStats(model_.stats());
    stmt.bind(1, std::string_view(info.name)).bind(2, std::string_view(info.sourceKind)).bind(3, std::string_view(info.source));
    stmt.bind(4, std::string_view(info.config)).bind(5, std::string_view(info.gpu));
    stmt.bind(6, static_cast<std::int64_t>(info.totalMemory)).bind(7, info.memoryFraction);
    stmt.bind(8, std::string_view(nowUtc())).bind(9, static_cast<std::int64_t>(keyframeInterval_));
    stmt.bindBlob(10, stats.data(), stats.size());
    stmt.run();
    runId_ = db.lastInsertRowId();
    storeKeyframe(db, runId_, 0, model_);
    return runId_;
}

void RunBuilder::applyFixup(SqliteDb& db, std::uint64_t afterCount, const alloc::DeviceStats& stats) {
    if (stats == model_.stats()) return;
    model_.setStats(stats);
    SqliteStatement stmt = db.prepare("INSERT OR REPLACE INTO stats_fixup(run, after_count, stats) VALUES (?, ?, ?)");
    const std::string blob = StateCodec::encodeStats(stats);
    stmt.bind(1, runId_).bind(2, static_cast<std::int64_t>(afterCount)).bindBlobStatic(3, blob.data(), blob.size());
    stmt.run();
}

void RunBuilder::track(const alloc::Event& e) {
    ++actionCounts_[static_cast<std::size_t>(e.action)];
    ranking_.observe(e);
    if (e.action == alloc::EventAction::SegmentAlloc || e.action == alloc::EventAction::SegmentMap) {
        // Union of every range ever reserved, merged as it grows.
        std::uint64_t start = e.address;
        std::uint64_t end = e.address + e.size;
        auto it = reservedEver_.upper_bound(start);
        if (it != reservedEver_.begin() && std::prev(it)->second >= start) {
            --it;
            start = it->first;
            end = std::max(end, it->second);
        }
        while (it != reservedEver_.end() && it->first <= end) {
            end = std::max(end, it->second);
            it = reservedEver_.erase(it);
        }
        reservedEver_[start] = end;
    }
    opCount_ = std::max(opCount_, e.opIndex + 1);
    const auto values = series_.array();
    // Fragmentation at the peak counts the most allocated while reserved is at its peak: the event
    // that first reaches it is a segment_alloc, before the block it was reserved for is allocated.
    if (values[1] > peaks_[1]) allocatedAtPeakReserved_ = values[0];
    else if (values[1] == peaks_[1]) allocatedAtPeakReserved_ = std::max(allocatedAtPeakReserved_, values[0]);
    for (std::size_t i = 0; i < 4; ++i) peaks_[i] = std::max(peaks_[i], values[i]);
    maxSegments_ = std::max<std::int64_t>(maxSegments_, static_cast<std::int64_t>(model_.segmentTable().size()));
    maxLiveBlocks_ = std::max<std::int64_t>(maxLiveBlocks_, static_cast<std::int64_t>(model_.liveBlocks()));
    maxInactiveSplit_ = std::max(maxInactiveSplit_, model_.stats().inactive_split_bytes[alloc::kAggregate].current);
    if ((e.seq + 1) % heatStride_ == 0) {
        heatSamples_.push_back(HeatmapRaster::sample(model_, e.seq));
        if (heatSamples_.size() >= 2 * static_cast<std::size_t>(kHeatmapColumns)) {
            heatStride_ *= 2;
            std::erase_if(heatSamples_, [&](const HeatmapSample& s) { return (s.seq + 1) % heatStride_ != 0; });
        }
    }
}

void RunBuilder::append(SqliteDb& db, const RecordBatch& batch) {
    std::size_t fixup = 0;
    if (!batch.events.empty()) {
        const std::uint64_t firstSeq = batch.events.front().seq;
        const SeriesValues start = series_;
        ByteWriter samples;
        std::array<std::int64_t, 8> granule{};
        std::size_t inGranule = 0;
        for (const alloc::Event& e : batch.events) {
            while (fixup < batch.fixups.size() && batch.fixups[fixup].first <= e.seq) {
                applyFixup(db, batch.fixups[fixup].first, batch.fixups[fixup].second);
                ++fixup;
            }
            if (e.seq % keyframeInterval_ == 0 && e.seq > 0) storeKeyframe(db, runId_, e.seq, model_);
            model_.apply(e);
            series_.apply(e);
            const auto values = series_.array();
            for (std::size_t i = 0; i < 4; ++i) {
                if (inGranule == 0 || values[i] < granule[2 * i]) granule[2 * i] = values[i];
                if (inGranule == 0 || values[i] > granule[2 * i + 1]) granule[2 * i + 1] = values[i];
            }
            if (++inGranule == kSampleEvents) {
                for (std::int64_t v : granule) samples.svarint(v);
                inGranule = 0;
            }
            track(e);
        }
        if (inGranule > 0) {
            for (std::int64_t v : granule) samples.svarint(v);
        }
        std::string blob;
        EventCodec::encode(batch.events.data(), batch.events.size(), blob);
        SqliteStatement stmt = db.prepare(
            "INSERT INTO event_chunk(run, first_seq, count, first_op, last_op, start_allocated, start_reserved, "
            "start_active, start_requested, samples, events) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
        stmt.bind(1, runId_).bind(2, static_cast<std::int64_t>(firstSeq)).bind(3, static_cast<std::int64_t>(batch.events.size()));
        stmt.bind(4, static_cast<std::int64_t>(batch.events.front().opIndex)).bind(5, static_cast<std::int64_t>(batch.events.back().opIndex));
        stmt.bind(6, start.allocated).bind(7, start.reserved).bind(8, start.active).bind(9, start.requested);
        stmt.bindBlobStatic(10, samples.bytes().data(), samples.bytes().size());
        stmt.bindBlobStatic(11, blob.data(), blob.size());
        stmt.run();
    }
    for (; fixup < batch.fixups.size(); ++fixup) applyFixup(db, batch.fixups[fixup].first, batch.fixups[fixup].second);
    if (!batch.phases.empty()) appendPhases(db, batch.phases);
    writeStacks(db, runId_, batch.stacks);
    SqliteStatement count = db.prepare("UPDATE run SET event_count = ? WHERE id = ?");
    count.bind(1, static_cast<std::int64_t>(model_.applied())).bind(2, runId_);
    count.run();
}

void RunBuilder::finish(SqliteDb& db, const alloc::StackTable* stacks, const std::string& divergence, bool complete) {
    if (stacks != nullptr) writeStacks(db, runId_, *stacks);
    if (complete) {
        if (model_.applied() > 0 && (heatSamples_.empty() || heatSamples_.back().seq != model_.applied() - 1)) {
            heatSamples_.push_back(HeatmapRaster::sample(model_, model_.applied() - 1));
        }
        const std::vector<std::pair<std::uint64_t, std::uint64_t>> axisRanges(reservedEver_.begin(), reservedEver_.end());
        const HeatmapGrid grid = HeatmapRaster::rasterize(heatSamples_, kHeatmapRows, &axisRanges);
        HeatmapTable::write(db, runId_, grid);
        AllocationBandTable::write(db, runId_, ranking_.finish());

        std::string counts;
        for (std::size_t i = 0; i < actionCounts_.size(); ++i) {
            if (i > 0) counts += ',';
            counts += std::string(alloc::actionName(static_cast<alloc::EventAction>(i))) + "=" + std::to_string(actionCounts_[i]);
        }
        const alloc::DeviceStats& final = model_.stats();
        const auto frag = [](std::int64_t allocated, std::int64_t reserved) {
            return reserved > 0 ? 1.0 - static_cast<double>(allocated) / static_cast<double>(reserved) : 0.0;
        };
        SqliteStatement sum = db.prepare(
            "INSERT OR REPLACE INTO summary(run, op_count, peak_allocated, peak_reserved, peak_active, peak_requested, "
            "action_counts, num_ooms, max_segments, max_live_blocks, max_inactive_split_bytes, fragmentation_at_peak, "
            "final_fragmentation, final_stats) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
        const std::string finalBlob = StateCodec::encodeStats(final);
        sum.bind(1, runId_).bind(2, static_cast<std::int64_t>(opCount_));
        for (int i = 0; i < 4; ++i) sum.bind(3 + i, peaks_[static_cast<std::size_t>(i)]);
        sum.bind(7, std::string_view(counts)).bind(8, static_cast<std::int64_t>(actionCounts_[static_cast<std::size_t>(alloc::EventAction::Oom)]));
        sum.bind(9, maxSegments_).bind(10, maxLiveBlocks_).bind(11, maxInactiveSplit_);
        sum.bind(12, frag(allocatedAtPeakReserved_, peaks_[1])).bind(13, frag(series_.allocated, series_.reserved));
        sum.bindBlob(14, finalBlob.data(), finalBlob.size());
        sum.run();
    }
    SqliteStatement run = db.prepare("UPDATE run SET status = ?, event_count = ?, divergence = ? WHERE id = ?");
    run.bind(1, std::string_view(complete ? "complete" : "interrupted")).bind(2, static_cast<std::int64_t>(model_.applied()));
    run.bind(3, std::string_view(divergence)).bind(4, runId_);
    run.run();
    heatSamples_.clear();
    heatSamples_.shrink_to_fit();
}

// The ordinal numbers a run's phases in the order they closed: the reader's ORDER BY first_seq,
// depth, ordinal then lists phases that start together in that order, as a stable sort would.
void RunBuilder::appendPhases(SqliteDb& db, const std::vector<PhaseSpan>& phases) {
    SqliteStatement insert = db.prepare(
        "INSERT INTO phase(run, ordinal, name, first_seq, last_seq, depth, first_op, last_op) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    for (const PhaseSpan& p : phases) {
        insert.bind(1, runId_).bind(2, phaseOrdinal_++).bind(3, std::string_view(p.name));
        insert.bind(4, static_cast<std::int64_t>(p.firstSeq)).bind(5, static_cast<std::int64_t>(p.lastSeq));
        insert.bind(6, static_cast<std::int64_t>(p.depth)).bind(7, static_cast<std::int64_t>(p.firstOp));
        insert.bind(8, static_cast<std::int64_t>(p.lastOp));
        insert.run();
    }
}

namespace {

// One stack per call: its frames interned in `frame`, the frame ids as a key in `stack_key`,
// linked to the run's stack id (INSERT OR REPLACE: a stack written twice stays one row).
class StackWriter {
public:
    StackWriter(SqliteDb& db, std::int64_t runId)
        : runId_(runId),
          insertFrame_(db.prepare("INSERT OR IGNORE INTO frame(filename, line, name) VALUES (?, ?, ?)")),
          findFrame_(db.prepare("SELECT id FROM frame WHERE filename = ? AND line = ? AND name = ?")),
          insertStack_(db.prepare("INSERT OR IGNORE INTO stack_key(frames) VALUES (?)")),
          findStack_(db.prepare("SELECT id FROM stack_key WHERE frames = ?")),
          link_(db.prepare("INSERT OR REPLACE INTO run_stack(run, stack_id, stack) VALUES (?, ?, ?)")) {}

    void write(std::uint32_t id, const alloc::Stack& frames) {
        ByteWriter key;
        for (const alloc::Frame& frame : frames) {
            insertFrame_.bind(1, std::string_view(frame.filename)).bind(2, frame.line).bind(3, std::string_view(frame.name));
            insertFrame_.run();
            findFrame_.bind(1, std::string_view(frame.filename)).bind(2, frame.line).bind(3, std::string_view(frame.name));
            findFrame_.step();
            key.varint(static_cast<std::uint64_t>(findFrame_.columnInt(0)));
            findFrame_.reset();
        }
        insertStack_.bindBlob(1, key.bytes().data(), key.bytes().size());
        insertStack_.run();
        findStack_.bindBlob(1, key.bytes().data(), key.bytes().size());
        findStack_.step();
        const std::int64_t stackKey = findStack_.columnInt(0);
        findStack_.reset();
        link_.bind(1, runId_).bind(2, static_cast<std::int64_t>(id)).bind(3, stackKey);
        link_.run();
    }

private:
    std::int64_t runId_;
    SqliteStatement insertFrame_, findFrame_, insertStack_, findStack_, link_;
};

}  // namespace

void writeStacks(SqliteDb& db, std::int64_t runId, const alloc::StackTable& stacks) {
    StackWriter writer(db, runId);
    for (std::size_t id = 1; id < stacks.size(); ++id) {
        writer.write(static_cast<std::uint32_t>(id), stacks.stack(static_cast<std::uint32_t>(id)));
    }
}

void writeStacks(SqliteDb& db, std::int64_t runId, const std::vector<std::pair<std::uint32_t, alloc::Stack>>& stacks) {
    if (stacks.empty()) return;
    StackWriter writer(db, runId);
    for (const auto& [id, frames] : stacks) writer.write(id, frames);
}

}  // namespace allocscope::storage
