// StepCursor cuts a trace into replay steps as a replay reaches them (reference §18.2): segment
// events join the next program event's step, a free_requested with its adjacent free_completed is
// one step, a later free_completed is a step of its own (the free was pending), snapshot markers
// belong to no program event, and segment events after the last program event form a trailing
// step. The conformance suites replay whole traces through it; this pins each rule on its own.
#include <QtTest>

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <vector>

#include "allocator/replay/StepCursor.h"

using namespace allocscope;
using alloc::EventAction;
using alloc::kNoEntry;
using alloc::TraceStep;

namespace {

alloc::RecordedTrace traceOf(std::initializer_list<std::pair<EventAction, std::uint64_t>> entries) {
    alloc::RecordedTrace trace;
    for (const auto& [action, address] : entries) {
        alloc::RecordedEntry e;
        e.action = action;
        e.address = address;
        e.size = 512;
        trace.entries.push_back(e);
    }
    return trace;
}

struct Cut {
    std::size_t begin, program, end;
    bool pending;
};

std::vector<Cut> cut(const alloc::RecordedTrace& trace) {
    alloc::StepCursor cursor(trace);
    std::vector<Cut> out;
    TraceStep step;
    while (cursor.next(step)) {
        out.push_back(Cut{step.begin, step.program, step.end, step.pendingFree});
        if (cursor.count() != out.size()) throw std::logic_error("count() is not the number of steps returned");
    }
    // Asked again after the end: still the end, and `step` untouched.
    step = TraceStep{7, 7, 8, true};
    if (cursor.next(step) || step.begin != std::size_t{7}) throw std::logic_error("a step after the last");
    return out;
}

bool same(const std::vector<Cut>& got, const std::vector<Cut>& want) {
    if (got.size() != want.size()) return false;
    for (std::size_t i = 0; i < got.size(); ++i) {
        const Cut& g = got[i];
        const Cut& w = want[i];
        if (g.begin != w.begin || g.program != w.program || g.end != w.end || g.pending != w.pending) return false;
    }
    return true;
}

}  // namespace

class TestStepCursor : public QObject {
    Q_OBJECT

private slots:
    void segmentEventsJoinTheNextProgramEvent() {
        const auto trace = traceOf({{EventAction::SegmentAlloc, 0x1000},
                                    {EventAction::Alloc, 0x1000},
                                    {EventAction::SegmentMap, 0x9000},
                                    {EventAction::Snapshot, 0},
                                    {EventAction::Alloc, 0x9000},
                                    {EventAction::Oom, 0}});
        QVERIFY(same(cut(trace), {{0, 1, 2, false}, {2, 4, 5, false}, {5, 5, 6, false}}));
    }

    void anAdjacentCompletionIsPartOfTheFree() {
        const auto trace = traceOf({{EventAction::Alloc, 0x1000},
                                    {EventAction::FreeRequested, 0x1000},
                                    {EventAction::FreeCompleted, 0x1000},
                                    {EventAction::Alloc, 0x2000}});
        QVERIFY(same(cut(trace), {{0, 0, 1, false}, {1, 1, 3, false}, {3, 3, 4, false}}));
    }

    void aLaterCompletionIsAStepOfItsOwn() {
        // The next entry completes another block's free: this free is pending.
        const auto trace = traceOf({{EventAction::FreeRequested, 0x1000},
                                    {EventAction::FreeCompleted, 0x2000},
                                    {EventAction::FreeCompleted, 0x1000}});
        QVERIFY(same(cut(trace), {{0, 0, 1, true}, {1, 1, 2, false}, {2, 2, 3, false}}));
        // The last entry: nothing follows, so the free is pending too.
        QVERIFY(same(cut(traceOf({{EventAction::FreeRequested, 0x1000}})), {{0, 0, 1, true}}));
    }

    void segmentEventsAfterTheLastProgramEventAreATrailingStep() {
        const auto trace = traceOf({{EventAction::Alloc, 0x1000},
                                    {EventAction::Snapshot, 0},
                                    {EventAction::SegmentFree, 0x1000},
                                    {EventAction::SegmentUnmap, 0x9000}});
        QVERIFY(same(cut(trace), {{0, 0, 1, false}, {1, kNoEntry, 4, false}}));
        // Only snapshot markers left: no trailing step.
        QVERIFY(same(cut(traceOf({{EventAction::Alloc, 0x1000}, {EventAction::Snapshot, 0}})), {{0, 0, 1, false}}));
        QVERIFY(cut(alloc::RecordedTrace{}).empty());
    }
};

QTEST_GUILESS_MAIN(TestStepCursor)
#include "TestStepCursor.moc"
