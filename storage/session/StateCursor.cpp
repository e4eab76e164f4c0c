#include "storage/session/StateCursor.h"

#include <algorithm>

#include "storage/session/SessionError.h"
#include "storage/session/StateCodec.h"

namespace allocscope::storage {

StateCursor::StateCursor(SessionReader& reader, int run) : reader_(reader), run_(run) {
    eventCount_ = reader_.run(run).eventCount;
}

void StateCursor::loadModel(std::uint64_t seq) {
    if (seq >= eventCount_) {
        throw SessionError("event " + std::to_string(seq) + " is past the end of run " + std::to_string(run_) + " (" +
                               std::to_string(eventCount_) + " events)",
                           reader_.path());
    }
    SqliteStatement s = reader_.db().prepare(
        "SELECT seq, state FROM keyframe WHERE run = ? AND seq <= ? ORDER BY seq DESC LIMIT 1");
    s.bind(1, static_cast<std::int64_t>(run_)).bind(2, static_cast<std::int64_t>(seq));
    if (!s.step()) throw SessionError("the session file is damaged: run " + std::to_string(run_) + " has no keyframe", reader_.path());
    const auto keySeq = static_cast<std::uint64_t>(s.columnInt(0));
    StateCodec::decodeKeyframe(s.columnBlob(1), keySeq, model_);
    journals_.clear();
    // Fixups after the keyframe, up to the one that applies right after `seq`.
    fixups_ = reader_.fixups(run_, keySeq, seq + 1);
    std::size_t fixup = 0;
    const std::uint64_t journalFrom = seq + 1 > kJournalDepth ? seq + 1 - kJournalDepth : 0;
    reader_.forEachChunk(run_, keySeq, seq, [&](std::uint64_t, const std::vector<alloc::Event>& events) {
        for (const alloc::Event& e : events) {
            if (e.seq < keySeq) continue;
            if (e.seq > seq) return false;
            if (e.seq >= journalFrom) {
                journals_.emplace_back();
                model_.apply(e, &journals_.back());
            } else {
                model_.apply(e);
            }
            while (fixup < fixups_.size() && fixups_[fixup].first <= e.seq + 1) model_.setStats(fixups_[fixup++].second);
        }
        return true;
    });
    if (model_.applied() != seq + 1) {
        throw SessionError("the session file is damaged: events of run " + std::to_string(run_) + " are missing", reader_.path());
    }
    seq_ = seq;
    loaded_ = true;
}

StateAtEvent StateCursor::current() {
    StateAtEvent out;
    out.seq = seq_;
    std::uint64_t first = 0;
    const auto& chunk = reader_.chunkAt(run_, seq_, first);
    out.event = chunk[seq_ - first];
    out.segments = model_.segments();
    out.stats = model_.stats();
    return out;
}

StateAtEvent StateCursor::load(std::uint64_t seq) {
    loadModel(seq);
    return current();
}

void StateCursor::applyNext(bool journal) {
    const std::uint64_t next = seq_ + 1;
    std::uint64_t first = 0;
    const auto& chunk = reader_.chunkAt(run_, next, first);
    if (journal) {
        if (journals_.size() >= kJournalDepth) journals_.pop_front();
        journals_.emplace_back();
        model_.apply(chunk[next - first], &journals_.back());
    } else {
        model_.apply(chunk[next - first]);
    }
    for (const auto& [after, stats] : reader_.fixups(run_, next, next + 1)) model_.setStats(stats);
    seq_ = next;
}

void StateCursor::advanceTo(std::uint64_t seq) {
    if (!loaded_) throw SessionError("no state loaded", reader_.path());
    if (seq <= seq_) return;
    if (seq >= eventCount_) seq = eventCount_ - 1;
    const auto fixups = reader_.fixups(run_, seq_ + 1, seq + 1);
    std::size_t fixup = 0;
    const std::uint64_t from = seq_ + 1;
    reader_.forEachChunk(run_, from, seq, [&](std::uint64_t, const std::vector<alloc::Event>& events) {
        for (const alloc::Event& e : events) {
            if (e.seq < from) continue;
            if (e.seq > seq) return false;
            model_.apply(e);
            while (fixup < fixups.size() && fixups[fixup].first <= e.seq + 1) model_.setStats(fixups[fixup++].second);
        }
        return true;
    });
    journals_.clear();
    seq_ = seq;
}

bool StateCursor::stepModel(int direction) {
    if (!loaded_) throw SessionError("no state loaded", reader_.path());
    if (direction > 0) {
        if (seq_ + 1 >= eventCount_) return false;
        applyNext(true);
        return true;
    }
    if (seq_ == 0) return false;
    if (journals_.empty()) {
        loadModel(seq_ - 1);
        return true;
    }
    model_.undo(journals_.back());
    journals_.pop_back();
    --seq_;
    return true;
}

StateAtEvent StateCursor::step(int direction) {
    stepModel(direction);
    return current();
}

}  // namespace allocscope::storage
