#include "storage/session/SessionRecorder.h"

#include <future>

#include "storage/session/HistoryStartTable.h"
#include "storage/session/RunRankTable.h"
#include "storage/session/RunVerdictTable.h"

namespace allocscope::storage {

SessionRecorder::SessionRecorder(SessionWriter& writer, const RunInfo& info, const alloc::DeviceStats& initial,
                                 RecorderOptions options)
    : writer_(writer), options_(std::move(options)),
      builder_(std::make_shared<RunBuilder>(initial, options_.keyframeInterval)),
      watch_(initial) {
    if (options_.batchEvents == 0) options_.batchEvents = 4096;
    auto id = std::make_shared<std::promise<std::int64_t>>();
    runId_ = id->get_future();
    writer_.submit([builder = builder_, info, id](SessionWriter::Context& ctx) {
        const std::int64_t run = builder->create(ctx.db, info);
        ctx.afterCommit.push_back([id, run] { id->set_value(run); });
    });
    if (options_.waitForRun) runNumber();
    batch_.events.reserve(options_.batchEvents);
}

int SessionRecorder::runNumber() const {
    if (runNumber_ == 0) {
        writer_.flush();  // rethrows the writer's error; otherwise the creation is committed
        runNumber_ = static_cast<int>(runId_.get());
    }
    return runNumber_;
}

SessionRecorder::~SessionRecorder() {
    if (finished_) return;
    try {
        flush();
        writer_.submit([builder = builder_](SessionWriter::Context& ctx) { builder->finish(ctx.db, nullptr, {}, false); });
        writer_.flush();
    } catch (...) {
        // A destructor must not throw; the run stays "recording", which readers show as interrupted.
    }
}

void SessionRecorder::onEvent(const alloc::Event& event) {
    batch_.events.push_back(event);
    batch_.events.back().seq = count_++;
    // Restored state (a history that starts mid-run) implies totals PyTorch never counted: the
    // next sync stores the allocator's own statistics over them.
    if (event.cause == alloc::EventCause::Restored) restoredSinceSync_ = true;
    if (batch_.events.size() >= options_.batchEvents) flush();
}

void SessionRecorder::syncStats(const alloc::DeviceStats& stats, bool force) {
    // Called after every replay step (millions in a big import): StatsWatch compares only what
    // events cannot explain.
    const bool fixup = force || restoredSinceSync_;
    restoredSinceSync_ = false;
    const bool changed = watch_.moved(stats);
    if (!fixup && !changed) return;
    if (!batch_.fixups.empty() && batch_.fixups.back().first == count_) batch_.fixups.back().second = stats;
    else batch_.fixups.emplace_back(count_, stats);
}

void SessionRecorder::takeNewStacks() {
    if (followed_ == nullptr) return;
    for (; stacksSent_ < followed_->size(); ++stacksSent_) {
        const auto id = static_cast<std::uint32_t>(stacksSent_);
        batch_.stacks.emplace_back(id, followed_->stack(id));
    }
}

void SessionRecorder::flush() {
    takeNewStacks();
    if (batch_.events.empty() && batch_.fixups.empty() && batch_.phases.empty() && batch_.stacks.empty()) return;
    auto batch = std::make_shared<RecordBatch>(std::move(batch_));
    batch_ = RecordBatch{};
    batch_.events.reserve(options_.batchEvents);
    auto callback = options_.onCommitted;
    writer_.submit([builder = builder_, batch, callback](SessionWriter::Context& ctx) {
        builder->append(ctx.db, *batch);
        if (callback) {
            const std::uint64_t committed = builder->eventCount();
            ctx.afterCommit.push_back([callback, committed] { callback(committed); });
        }
    });
}

void SessionRecorder::finish(const alloc::StackTable* stacks, const std::string& divergence) { end(stacks, divergence, true); }

void SessionRecorder::interrupt(const alloc::StackTable* stacks) { end(stacks, {}, false); }

void SessionRecorder::end(const alloc::StackTable* stacks, const std::string& divergence, bool complete) {
    flush();
    finished_ = true;
    // A followed table went out batch by batch (the flush above sent the rest): not again.
    const bool streamed = stacks != nullptr && stacks == followed_;
    std::shared_ptr<alloc::StackTable> copy = stacks != nullptr && !streamed ? std::make_shared<alloc::StackTable>(*stacks) : nullptr;
    writer_.submit([builder = builder_, copy, divergence, complete, start = historyStart_, verdict = verdict_,
                    rank = rank_](SessionWriter::Context& ctx) {
        if (start) HistoryStartTable::write(ctx.db, builder->runId(), *start);
        if (verdict) RunVerdictTable::write(ctx.db, builder->runId(), *verdict);
        if (rank) RunRankTable::write(ctx.db, builder->runId(), *rank);
        builder->finish(ctx.db, copy.get(), divergence, complete);
    });
    writer_.flush();
}

}  // namespace allocscope::storage
