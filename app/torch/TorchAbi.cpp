// The C ABI of liballocscope_torch (allocscope_torch.h): each function turns its arguments into
// the domain's, runs the TorchRuntime, and turns an exception into -1 / NULL plus this thread's
// last error. One deliberate exception: with allocscope_set_oom_raises(1) (what the Python helper
// sets) a malloc that cannot be served throws std::runtime_error with PyTorch's OOM text, because
// PyTorch 2.11 does not check alloc_fn's result: a NULL became a tensor at address 0 on the H200,
// and the program ran on into an illegal address. The exception unwinds through PyTorch's C++
// (CUDAPluggableAllocator::malloc, a std::function) to its Python bindings, which raise it as a
// RuntimeError. A C or ctypes caller keeps the NULL (off by default): a C++ exception cannot cross
// their frames.
#include "app/torch/allocscope_torch.h"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>

#include "app/torch/PythonFrames.h"
#include "app/torch/TorchRuntime.h"

namespace {

using allocscope::torchabi::TorchRuntime;

thread_local std::string tLastError;
std::atomic<bool> gOomRaises{false};

void setError(const std::string& text) { tLastError = text; }

std::uint64_t addressOf(const void* ptr) { return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(ptr)); }

std::size_t copyOut(const std::string& text, char* buffer, std::size_t capacity) {
    if (buffer && capacity > 0) {
        const std::size_t n = text.size() < capacity - 1 ? text.size() : capacity - 1;
        std::memcpy(buffer, text.data(), n);
        buffer[n] = '\0';
    }
    return text.size();
}

// Runs fn; 0, or -1 with the error kept.
template <class Fn>
int guarded(Fn&& fn) {
    try {
        tLastError.clear();
        fn();
        return 0;
    } catch (const std::exception& e) {
        setError(e.what());
    } catch (...) {
        setError("unknown error");
    }
    return -1;
}

}  // namespace

extern "C" {

void* allocscope_malloc(size_t size, int device, void* stream) {
    void* out = nullptr;
    guarded([&] {
        TorchRuntime& runtime = TorchRuntime::instance();
        allocscope::torchabi::TorchDevice& d = runtime.device(device);
        // Outside the device's lock: the frames are read under the GIL, not under our mutex.
        const allocscope::alloc::Stack stack =
            runtime.pythonFrames() ? allocscope::torchabi::PythonFrames::capture() : allocscope::alloc::Stack{};
        // The OOM text comes with the failure, taken under the device's lock: this thread's own.
        const auto result = d.malloc(size, addressOf(stream), stack);
        if (result.address) {
            out = reinterpret_cast<void*>(static_cast<std::uintptr_t>(*result.address));
        } else if (size > 0) {
            setError(result.oomMessage);
        }
    });
    if (!out && size > 0 && gOomRaises.load(std::memory_order_relaxed)) throw std::runtime_error(tLastError);
    return out;
}

void allocscope_free(void* ptr, size_t /*size*/, int device, void* /*stream*/) {
    if (!ptr) return;
    guarded([&] {
        if (!TorchRuntime::instance().device(device).free(addressOf(ptr))) {
            setError("allocscope_free: " + std::to_string(addressOf(ptr)) + " is no block of device " + std::to_string(device));
        }
    });
}

int allocscope_record_stream(void* ptr, void* stream) {
    return guarded([&] {
        bool known = false;
        TorchRuntime::instance().forEachDevice([&](allocscope::torchabi::TorchDevice& d) {
            if (!known) known = d.recordStream(addressOf(ptr), addressOf(stream));
        });
        if (!known) throw std::invalid_argument("allocscope_record_stream: " + std::to_string(addressOf(ptr)) + " is no allocated block");
    });
}

int allocscope_empty_cache(void) {
    return guarded([] { TorchRuntime::instance().forEachDevice([](allocscope::torchabi::TorchDevice& d) { d.emptyCache(); }); });
}

int allocscope_synchronize(void) {
    return guarded([] { TorchRuntime::instance().forEachDevice([](allocscope::torchabi::TorchDevice& d) { d.synchronize(); }); });
}

int allocscope_set_memory_fraction(double fraction, int device) {
    return guarded([&] {
        if (!(fraction >= 0.0 && fraction <= 1.0)) {
            throw std::invalid_argument("allocscope_set_memory_fraction: " + std::to_string(fraction) + " is not within [0, 1]");
        }
        TorchRuntime::instance().device(device).setMemoryFraction(fraction);
    });
}

int allocscope_reset_peak_stats(int device) {
    return guarded([&] { TorchRuntime::instance().device(device).resetPeakStats(); });
}

int allocscope_reset_accumulated_stats(int device) {
    return guarded([&] { TorchRuntime::instance().device(device).resetAccumulatedStats(); });
}

size_t allocscope_stats_json(int device, char* buffer, size_t capacity) {
    std::size_t n = 0;
    guarded([&] { n = copyOut(TorchRuntime::instance().device(device).statsJson(), buffer, capacity); });
    return n;
}

size_t allocscope_memory_summary(int device, char* buffer, size_t capacity) {
    std::size_t n = 0;
    guarded([&] { n = copyOut(TorchRuntime::instance().device(device).memorySummary(), buffer, capacity); });
    return n;
}

int allocscope_finish(void) {
    return guarded([] { TorchRuntime::instance().finish(); });
}

const char* allocscope_last_error(void) { return tLastError.c_str(); }

const char* allocscope_session_path(void) {
    try {
        return TorchRuntime::instance().sessionPath().c_str();
    } catch (...) {
        return "";
    }
}

int allocscope_use_simulated_device(unsigned long long total_memory) {
    return guarded([&] { TorchRuntime::instance().useSimulatedDevice(total_memory); });
}

int allocscope_set_oom_raises(int on) {
    return gOomRaises.exchange(on != 0, std::memory_order_relaxed) ? 1 : 0;
}

int allocscope_set_python_frames(int on) {
    return guarded([&] { TorchRuntime::instance().setPythonFrames(on != 0); });
}

}  // extern "C"
