#pragma once
// The process-wide state behind the C ABI: the settings read from the environment at the first
// call, the session writer, and one TorchDevice per device index used. Created once and never
// destroyed (PyTorch may free tensors while the process exits, after every destructor we could
// register); allocscope_finish and the atexit handler end the recording instead.
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "app/torch/TorchDevice.h"
#include "app/torch/TorchSettings.h"
#include "storage/session/SessionWriter.h"

namespace allocscope::torchabi {

class TorchRuntime {
public:
    static constexpr int kMaxDevices = 64;

    static TorchRuntime& instance();

    // The device's allocator, created on first use. Throws with the reason the library cannot
    // allocate (refused config, no GPU, bad device index).
    TorchDevice& device(int index);
    // Every device created so far, in index order.
    template <class Fn>
    void forEachDevice(Fn&& fn) {
        for (auto& slot : devices_) {
            if (TorchDevice* d = slot.load(std::memory_order_acquire)) fn(*d);
        }
    }

    void useSimulatedDevice(std::uint64_t totalMemory);
    void setPythonFrames(bool on) { pythonFrames_.store(on, std::memory_order_relaxed); }
    bool pythonFrames() const { return pythonFrames_.load(std::memory_order_relaxed); }
    void finish();
    const std::string& sessionPath() const { return sessionPath_; }

private:
    TorchRuntime();
    std::unique_ptr<TorchDevice> create(int index);
    storage::RunInfo runInfo(int index) const;

    std::mutex mutex_;  // creating devices, finishing
    TorchSettings settings_;
    std::unique_ptr<storage::SessionWriter> writer_;
    std::string sessionPath_;    // "" unless a session is being recorded
    std::string sessionError_;   // why the session given is not recorded
    std::array<std::atomic<TorchDevice*>, kMaxDevices> devices_{};
    std::atomic<bool> pythonFrames_{false};
    long long owner_;  // the process that read the settings (and records)
    bool finished_ = false;
};

}  // namespace allocscope::torchabi
