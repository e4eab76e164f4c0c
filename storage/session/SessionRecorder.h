#pragma once
// Records one run into a session: an alloc::EventSink that collects the allocator's events into
// batches and hands each full batch to the session's writer thread (which applies, encodes and
// commits it). The allocator thread only copies events; a slow disk makes it wait at the
// writer's bounded queue rather than grow memory.
//
// Call syncStats(allocator.stats()) after every program op: the events do not reveal
// num_alloc_retries, num_sync_all_streams or peak/accumulated resets, so when those change the
// recorder stores the allocator's own statistics (a "stats fixup") at that point of the stream.
#include <array>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "allocator/core/DeviceStats.h"
#include "allocator/core/EventSink.h"
#include "allocator/core/StackTable.h"
#include "storage/session/RunBuilder.h"
#include "storage/session/SessionTypes.h"
#include "storage/session/SessionWriter.h"
#include "storage/session/StatsWatch.h"

namespace allocscope::storage {

struct RecorderOptions {
    std::size_t batchEvents = 4096;
    std::uint64_t keyframeInterval = kDefaultKeyframeInterval;  // a multiple of batchEvents is best
    // Called on the writer thread after each commit with the run's committed event count.
    std::function<void(std::uint64_t)> onCommitted;
    // false: the constructor only queues the run's creation and runNumber() waits for it. The
    // parallel import creates its runs in file order this way, without a round trip to the
    // writer thread for each (the writer applies tasks in order, so batches follow the creation).
    bool waitForRun = true;
};

class SessionRecorder final : public alloc::EventSink {
public:
    // Creates the run (numbered from 1 in creation order). `initial` = allocator.stats() before
    // the first event (it carries max_split_size); the allocator must be fresh (no segments).
    SessionRecorder(SessionWriter& writer, const RunInfo& info, const alloc::DeviceStats& initial,
                    RecorderOptions options = {});
    // Without finish(): commits what was recorded and marks the run interrupted.
    ~SessionRecorder() override;
    SessionRecorder(const SessionRecorder&) = delete;
    SessionRecorder& operator=(const SessionRecorder&) = delete;

    // Waits for the run's creation if the constructor did not (RecorderOptions::waitForRun).
    int runNumber() const;
    std::uint64_t eventCount() const { return count_; }

    // Events are renumbered from 0 in arrival order (seq), whatever the allocator stamped.
    void onEvent(const alloc::Event& event) override;
    // force: store these stats at this point whatever changed (e.g. a replay's final stats when
    // no per-op sync was possible).
    void syncStats(const alloc::DeviceStats& stats, bool force = false);
    // A phase of the run that has closed: stored with the next batch of events (or by finish()
    // or interrupt()), so the phases of a long run are not held in memory to its end.
    void addPhase(PhaseSpan phase) { batch_.phases.push_back(std::move(phase)); }
    // Where the recorded history starts when it starts mid-run (HistoryStartTable), stored by
    // finish() or interrupt() in the same transaction.
    void setHistoryStart(const HistoryStart& start) { historyStart_ = start; }
    // Whether the run was compared with a recording (RunVerdictTable), stored by finish() or
    // interrupt() in the same transaction. Without it the run reads as VerdictKind::Unknown.
    void setVerdict(RunVerdict verdict) { verdict_ = std::move(verdict); }
    // The run's rank in a distributed job (RunRankTable), stored by finish() or interrupt().
    void setRank(std::optional<RunRank> rank) { rank_ = std::move(rank); }
    // The table the recorded events' stack ids come from, read at each batch (under the caller's
    // own serialisation of onEvent): its new stacks go with the batch, so that a reader of the run
    // while it records finds them. Stacks must be interned before the events that use them.
    void followStacks(const alloc::StackTable* stacks) { followed_ = stacks; }
    // Stores stacks, summary and heatmap, marks the run complete and waits for the commit.
    void finish(const alloc::StackTable* stacks = nullptr, const std::string& divergence = {});
    // A recording stopped on purpose (cancelled): commits what was recorded with its stacks and
    // phases and marks the run interrupted, as a killed recording would leave it.
    void interrupt(const alloc::StackTable* stacks = nullptr);

private:
    void flush();
    // The followed table's stacks interned since the last batch, into this one.
    void takeNewStacks();
    // finish() and interrupt(): the last batch, then the run's end in one transaction.
    void end(const alloc::StackTable* stacks, const std::string& divergence, bool complete);

    SessionWriter& writer_;
    RecorderOptions options_;
    std::shared_ptr<RunBuilder> builder_;
    mutable std::future<std::int64_t> runId_;
    mutable int runNumber_ = 0;
    std::uint64_t count_ = 0;
    RecordBatch batch_;
    StatsWatch watch_;  // the statistics as syncStats last saw them
    bool finished_ = false;
    std::optional<HistoryStart> historyStart_;
    std::optional<RunVerdict> verdict_;
    std::optional<RunRank> rank_;
    bool restoredSinceSync_ = false;
    const alloc::StackTable* followed_ = nullptr;  // followStacks()
    std::size_t stacksSent_ = 1;                   // its ids below this went with a batch (0 = none)
};

}  // namespace allocscope::storage
