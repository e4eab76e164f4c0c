#include "app/torch/TorchRuntime.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "allocator/device/SimulatedDevice.h"
#include "storage/session/SessionError.h"
#ifdef ALLOCSCOPE_HAVE_CUDA
#include "allocator/device/cuda/CudaDevice.h"
#endif

namespace allocscope::torchabi {
namespace {

// The process's command line (argv joined by spaces), shortened: what the run list shows.
std::string commandLine() {
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    while (!text.empty() && text.back() == '\0') text.pop_back();
    for (char& c : text) {
        if (c == '\0') c = ' ';
    }
    constexpr std::size_t kLongest = 200;
    if (text.size() > kLongest) text = text.substr(0, kLongest) + "...";
    return text.empty() ? std::string("?") : text;
}

void reportOnce(const std::string& text) { std::fprintf(stderr, "liballocscope_torch: %s\n", text.c_str()); }

}  // namespace

TorchRuntime& TorchRuntime::instance() {
    // Never destroyed: see the header.
    static TorchRuntime* runtime = [] {
        auto* r = new TorchRuntime();
        // In a shared object glibc runs this at dlclose too, before the code goes away.
        std::atexit([] { TorchRuntime::instance().finish(); });
        return r;
    }();
    return *runtime;
}

TorchRuntime::TorchRuntime() : settings_(TorchSettings::fromEnvironment()), owner_(getpid()) {
    pythonFrames_.store(settings_.pythonFrames);
    if (!settings_.error.empty()) reportOnce(settings_.error + "; every allocation will fail");
    if (settings_.sessionPath.empty()) return;
    try {
        writer_ = std::make_unique<storage::SessionWriter>(settings_.sessionPath);
        sessionPath_ = settings_.sessionPath;
    } catch (const std::exception& e) {
        sessionError_ = "ALLOCSCOPE_SESSION='" + settings_.sessionPath + "' is not recorded into: " + e.what() +
                        " (the file is left as it was)";
        reportOnce(sessionError_);
    }
}

storage::RunInfo TorchRuntime::runInfo(int index) const {
    storage::RunInfo info;
    const std::string pid = std::to_string(static_cast<long long>(getpid()));
    info.name = "pytorch " + pid + " cuda:" + std::to_string(index);
    info.sourceKind = "live";
    info.source = "pytorch process " + pid + " (" + commandLine() + ")";
    info.config = settings_.configText;
    return info;
}

std::unique_ptr<TorchDevice> TorchRuntime::create(int index) {
    TorchDeviceSetup setup;
    setup.index = index;
    setup.config = settings_.config;
    setup.run = runInfo(index);
    setup.writer = writer_.get();
    if (settings_.simulatedBytes) {
        setup.memory = std::make_unique<alloc::SimulatedDevice>(*settings_.simulatedBytes, 0);
        return std::make_unique<TorchDevice>(std::move(setup));
    }
#ifdef ALLOCSCOPE_HAVE_CUDA
    if (const auto reason = alloc::CudaDevice::unavailableReason(index)) {
        throw std::runtime_error("device " + std::to_string(index) + ": " + *reason);
    }
    alloc::CudaDeviceOptions options;
    options.device = index;
    setup.memory = std::make_unique<alloc::CudaDevice>(options);
    setup.realStreams = true;
    return std::make_unique<TorchDevice>(std::move(setup));
#else
    throw std::runtime_error("this liballocscope_torch was built without CUDA: set ALLOCSCOPE_DEVICE=simulated:BYTES");
#endif
}

TorchDevice& TorchRuntime::device(int index) {
    if (index < 0 || index >= kMaxDevices) {
        throw std::invalid_argument("device " + std::to_string(index) + " is out of range (0.." + std::to_string(kMaxDevices - 1) + ")");
    }
    if (TorchDevice* d = devices_[static_cast<std::size_t>(index)].load(std::memory_order_acquire)) return *d;
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!settings_.error.empty()) throw std::runtime_error(settings_.error);
    auto& slot = devices_[static_cast<std::size_t>(index)];
    if (TorchDevice* d = slot.load(std::memory_order_acquire)) return *d;
    TorchDevice* created = create(index).release();  // lives as long as the process
    slot.store(created, std::memory_order_release);
    const std::string failed = created->recordingError();
    if (!failed.empty()) reportOnce(failed);
    return *created;
}

void TorchRuntime::useSimulatedDevice(std::uint64_t totalMemory) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (totalMemory == 0) throw std::invalid_argument("allocscope_use_simulated_device: the total memory must be positive");
    for (const auto& slot : devices_) {
        if (slot.load()) throw std::logic_error("allocscope_use_simulated_device must come before the first allocation");
    }
    settings_.simulatedBytes = totalMemory;
}

void TorchRuntime::finish() {
    // A child forked from the recording process (os.fork) inherits this state but not the
    // writer's thread: the run is the parent's to end, and waiting for that thread would hang.
    if (getpid() != owner_) return;
    const std::lock_guard<std::mutex> lock(mutex_);
    if (finished_) return;
    finished_ = true;
    forEachDevice([](TorchDevice& d) {
        try {
            d.finishRecording();
        } catch (const std::exception& e) {
            reportOnce(std::string("the recording could not be finished: ") + e.what());
        }
    });
    // Closing the writer commits what is queued and leaves no -wal/-shm beside the session.
    writer_.reset();
}

}  // namespace allocscope::torchabi
