#include "storage/session/RecordingObserver.h"

#include <stdexcept>
#include <string>

#include "allocator/core/CachingAllocator.h"
#include "allocator/device/SimulatedDevice.h"

namespace allocscope::storage {
namespace {

RunInfo infoOf(const RecordTarget& target, std::uint64_t total) {
    RunInfo info = target.info;
    info.totalMemory = total;
    if (target.memoryFraction) info.memoryFraction = *target.memoryFraction;
    return info;
}

// The run starts from a fresh allocator's statistics (they carry max_split_size); the one that
// will run the program is built by the driver, possibly later and on another thread.
alloc::DeviceStats initialStats(const RecordTarget& target, std::uint64_t total) {
    alloc::SimulatedDevice device(total, target.otherMemory, target.info.gpu);
    const alloc::CachingAllocator fresh(target.config, device);
    return fresh.stats();
}

}  // namespace

std::uint64_t RecordingObserver::judgedTotal(const RecordTarget& target) {
    if (target.config.backend == alloc::Backend::CudaMallocAsync) {
        throw std::invalid_argument("backend:cudaMallocAsync keeps no segments, so its runs cannot be recorded into a session (config '" +
                                    target.info.config + "')");
    }
    checkMemoryFraction(target.memoryFraction);
    const std::uint64_t total = target.totalMemory != 0 ? target.totalMemory : target.info.totalMemory;
    if (total == 0) throw std::invalid_argument("the simulated GPU needs a total memory (run '" + target.info.name + "')");
    return total;
}

RecordingObserver::RecordingObserver(SessionWriter& writer, const alloc::Program& program, const alloc::StackTable* stacks,
                                     const RecordTarget& target)
    : program_(program),
      stacks_(stacks),
      totalMemory_(judgedTotal(target)),
      recorder_(writer, infoOf(target, totalMemory_), initialStats(target, totalMemory_)),
      phases_([this](PhaseSpan&& span) { recorder_.addPhase(std::move(span)); }) {
    // A program run is simulated and checked against nothing: a workload has no recording, and a
    // recorded trace run as a program (Compare, recommend) is not compared with its recording.
    if (target.info.sourceKind == "demo") {
        recorder_.setVerdict({VerdictKind::Simulated, "simulated (a workload run: no recording to compare with)", {}});
    } else {
        recorder_.setVerdict({VerdictKind::WhatIf,
                              "what-if (not compared): the recorded program run under this config, not checked against the recording",
                              {}});
    }
}

void RecordingObserver::beforeOp(const alloc::Op& op, std::uint64_t index) {
    // A mark sits between the events of the ops before it and those of the ops after it.
    phases_.markOp(program_, op, index, recorder_.eventCount());
}

void RecordingObserver::afterOp(const alloc::Op&, std::uint64_t index, const alloc::CachingAllocator& allocator) {
    lastOp_ = index;
    // Retries, syncs and resets leave no event: the recorder stores the stats where they change.
    recorder_.syncStats(allocator.stats());
}

void RecordingObserver::finish(const alloc::CachingAllocator&, const alloc::ProgramResult&) {
    phases_.finish(recorder_.eventCount(), lastOp_);
    recorder_.finish(stacks_);
}

void RecordingObserver::interrupt() {
    phases_.finish(recorder_.eventCount(), lastOp_);
    recorder_.interrupt(stacks_);
}

}  // namespace allocscope::storage
