#pragma once
// Records one run of a program into a session while something else drives the allocator:
// recordProgram's own loop, or ComparisonEngine measuring a comparison (`compare --db`), so the
// run that is recorded is the run that was measured. The run is created at construction — run
// numbers follow the order the observers are built in, whichever thread later runs them — and
// then every event, the statistics after every op (retries and resets leave no event) and the
// program's phase marks are stored as they happen. finish() completes the run; an observer
// destroyed without finish() or interrupt() leaves it marked interrupted.
#include <cstdint>

#include "allocator/compare/RunObserver.h"
#include "allocator/core/Op.h"
#include "allocator/core/StackTable.h"
#include "storage/session/PhaseTracker.h"
#include "storage/session/ProgramRecording.h"
#include "storage/session/SessionRecorder.h"
#include "storage/session/SessionWriter.h"

namespace allocscope::storage {

class RecordingObserver final : public alloc::RunObserver {
public:
    // Judges the target before anything is written: throws std::invalid_argument for
    // backend:cudaMallocAsync (no segments to record), a memory fraction outside [0, 1] or no
    // total memory; then creates the run (SessionError when the session cannot be written).
    // `program` and `stacks` must outlive the observer.
    RecordingObserver(SessionWriter& writer, const alloc::Program& program, const alloc::StackTable* stacks,
                      const RecordTarget& target);

    int runNumber() const { return recorder_.runNumber(); }
    // The simulated GPU's total memory the run must use (RecordTarget's, or its info's).
    std::uint64_t totalMemory() const { return totalMemory_; }

    void onEvent(const alloc::Event& event) override { recorder_.onEvent(event); }
    void beforeOp(const alloc::Op& op, std::uint64_t index) override;
    void afterOp(const alloc::Op& op, std::uint64_t index, const alloc::CachingAllocator& allocator) override;
    // Stores phases and stacks and marks the run complete (also after an invalid op: the run is
    // complete up to there).
    void finish(const alloc::CachingAllocator& allocator, const alloc::ProgramResult& result) override;
    // Stopped on purpose (cancelled): stored up to here, marked interrupted.
    void interrupt();

private:
    static std::uint64_t judgedTotal(const RecordTarget& target);

    const alloc::Program& program_;
    const alloc::StackTable* stacks_;
    std::uint64_t totalMemory_;
    SessionRecorder recorder_;
    PhaseTracker phases_;
    std::uint64_t lastOp_ = 0;  // the last op applied
};

}  // namespace allocscope::storage
