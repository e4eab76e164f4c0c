#include "app/torch/TorchDevice.h"

#include <exception>

#include "app/cli/StatsJson.h"
#include "app/torch/TorchStreamUses.h"

namespace allocscope::torchabi {

TorchDevice::TorchDevice(TorchDeviceSetup setup) : index_(setup.index), memory_(std::move(setup.memory)) {
    if (setup.realStreams) uses_ = std::make_unique<TorchStreamUses>(index_);
    allocator_ = std::make_unique<alloc::CachingAllocator>(setup.config, *memory_, static_cast<alloc::EventSink*>(this));
    if (setup.writer) {
        storage::RunInfo info = setup.run;
        info.gpu = memory_->name();
        info.totalMemory = memory_->totalMemory();
        try {
            // The run's creation is queued like every batch: the first malloc does not wait for
            // its commit (a failure surfaces at the next batch and stops the recording).
            storage::RecorderOptions options;
            options.waitForRun = false;
            recorder_ = std::make_unique<storage::SessionRecorder>(*setup.writer, info, allocator_->stats(), options);
            // Stacks go with each batch (under this device's mutex, like the events): a reader of
            // the run while it records sees the Python frames of what it shows.
            recorder_->followStacks(&stacks_);
        } catch (const std::exception& e) {
            recordingError_ = std::string("recording device ") + std::to_string(index_) + " failed: " + e.what();
        }
    }
}

TorchDevice::~TorchDevice() = default;

void TorchDevice::onEvent(const alloc::Event& event) {
    // The OOM retry and empty_cache complete every pending free inside the allocator (c10 first
    // synchronises and frees the events): on real streams, wait for them before any block the
    // allocator now thinks free can be handed out again.
    if (uses_ && event.action == alloc::EventAction::FreeCompleted && event.cause != alloc::EventCause::Program &&
        !uses_->empty()) {
        uses_->drain([](std::uint64_t) {});
    }
    if (!recorder_) return;
    try {
        recorder_->onEvent(event);
    } catch (const std::exception& e) {
        // The writer failed (disk full, file removed): the allocation goes on, the recording stops.
        recordingError_ = std::string("recording stopped: ") + e.what();
    }
}

void TorchDevice::afterOp() {
    ++opIndex_;
    if (recorder_ && recordingError_.empty()) {
        try {
            recorder_->syncStats(allocator_->stats());
        } catch (const std::exception& e) {
            recordingError_ = std::string("recording stopped: ") + e.what();
        }
    }
    if (!recordingError_.empty() && recorder_) {
        // Dropped without finish(): what was committed stays, the run reads as interrupted.
        recorder_.reset();
    }
}

void TorchDevice::completeFinishedFrees() {
    if (uses_ && !uses_->empty()) {
        uses_->poll([this](std::uint64_t address) { allocator_->completePendingFree(address); });
    }
}

TorchDevice::Malloc TorchDevice::malloc(std::uint64_t size, alloc::StreamId stream,
                                        const alloc::Stack& stack) {
    return op([&] {
        completeFinishedFrees();
        const std::uint32_t stackId = stack.empty() ? 0 : stacks_.intern(stack);
        Malloc result{allocator_->malloc(size, stream, stackId), {}};
        if (result.address && uses_) uses_->allocated(*result.address, stream);
        if (!result.address && size > 0) result.oomMessage = allocator_->lastOom().message;
        return result;
    });
}

bool TorchDevice::free(std::uint64_t address) {
    return op([&] {
        const bool known = allocator_->free(address);
        if (known && uses_) uses_->freed(address);
        return known;
    });
}

bool TorchDevice::recordStream(std::uint64_t address, alloc::StreamId stream) {
    return op([&] {
        const bool known = allocator_->recordStream(address, stream);
        if (known && uses_) uses_->used(address, stream);
        return known;
    });
}

void TorchDevice::synchronize() {
    op([&] {
        if (uses_) uses_->drain([](std::uint64_t) {});
        allocator_->synchronize();
    });
}

void TorchDevice::emptyCache() {
    op([&] {
        if (uses_) uses_->drain([](std::uint64_t) {});
        allocator_->emptyCache();
    });
}

void TorchDevice::setMemoryFraction(double fraction) {
    op([&] { allocator_->setMemoryFraction(fraction); });
}

void TorchDevice::resetPeakStats() {
    op([&] { allocator_->resetPeakStats(); });
}

void TorchDevice::resetAccumulatedStats() {
    op([&] { allocator_->resetAccumulatedStats(); });
}

std::string TorchDevice::statsJson() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return cli::statsToJson(allocator_->stats());
}

std::string TorchDevice::memorySummary() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return allocator_->memorySummary(index_);
}

void TorchDevice::finishRecording() {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!recorder_) return;
    recorder_->syncStats(allocator_->stats(), true);
    recorder_->finish(&stacks_);
    recorder_.reset();
}

std::string TorchDevice::recordingError() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return recordingError_;
}

}  // namespace allocscope::torchabi
