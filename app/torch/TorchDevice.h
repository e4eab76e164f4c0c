#pragma once
// One device of the PyTorch process: its caching allocator over the device backend (CUDA or
// simulated), the recorder of its run when a session is recorded, and the pending frees of
// blocks used on other streams. PyTorch calls from several threads: every member function takes
// the device's mutex, as c10 serialises each device's allocator.
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "allocator/core/CachingAllocator.h"
#include "allocator/core/EventSink.h"
#include "allocator/core/StackTable.h"
#include "storage/session/SessionRecorder.h"
#include "storage/session/SessionWriter.h"

namespace allocscope::torchabi {

class TorchStreamUses;

struct TorchDeviceSetup {
    int index = 0;
    alloc::AllocatorConfig config;
    storage::RunInfo run;  // what the recorded run says it is (totalMemory and gpu filled here)
    std::unique_ptr<alloc::DeviceMemory> memory;
    // Real CUDA streams: frees of blocks used on other streams wait for those streams
    // (TorchStreamUses). Without: they complete at synchronize / empty_cache.
    bool realStreams = false;
    storage::SessionWriter* writer = nullptr;  // null: not recorded
};

class TorchDevice final : private alloc::EventSink {
public:
    explicit TorchDevice(TorchDeviceSetup setup);
    ~TorchDevice() override;
    TorchDevice(const TorchDevice&) = delete;
    TorchDevice& operator=(const TorchDevice&) = delete;

    // What a malloc gave: the block's address, or after an OOM nullopt and PyTorch's OOM text
    // (the oom event is recorded). The text is copied under the same lock as the failure: read
    // from the allocator afterwards, another thread's OOM in between could have replaced it.
    struct Malloc {
        std::optional<std::uint64_t> address;
        std::string oomMessage;  // "" when allocated, and for size 0 (nullopt without an OOM)
    };
    Malloc malloc(std::uint64_t size, alloc::StreamId stream, const alloc::Stack& stack);
    bool free(std::uint64_t address);
    bool recordStream(std::uint64_t address, alloc::StreamId stream);
    void synchronize();
    void emptyCache();
    void setMemoryFraction(double fraction);
    void resetPeakStats();
    void resetAccumulatedStats();
    std::string statsJson();
    std::string memorySummary();
    // Ends this device's run (complete) and stops recording; the allocator keeps working.
    void finishRecording();
    // Why recording stopped early (the writer failed), "" otherwise.
    std::string recordingError();

private:
    void onEvent(const alloc::Event& event) override;
    // One program op: under the device's mutex, the allocator stamps its events with the op's
    // index, then the stats are synced to the recorder and the index moves on.
    template <class Fn>
    auto op(Fn&& fn) {
        const std::lock_guard<std::mutex> lock(mutex_);
        allocator_->setOpIndex(opIndex_);
        if constexpr (std::is_void_v<decltype(fn())>) {
            fn();
            afterOp();
        } else {
            auto result = fn();
            afterOp();
            return result;
        }
    }
    void afterOp();
    void completeFinishedFrees();

    std::mutex mutex_;
    int index_;
    std::unique_ptr<alloc::DeviceMemory> memory_;
    alloc::StackTable stacks_;
    std::unique_ptr<storage::SessionRecorder> recorder_;
    std::unique_ptr<alloc::CachingAllocator> allocator_;
    std::unique_ptr<TorchStreamUses> uses_;
    std::uint64_t opIndex_ = 0;
    std::string recordingError_;
};

}  // namespace allocscope::torchabi
