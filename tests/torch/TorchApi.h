#pragma once
// liballocscope_torch.so's C ABI loaded with dlopen, as PyTorch and ctypes load it: the tests and
// the benchmark call the library the way a PyTorch process does, never its C++ insides.
#include <dlfcn.h>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace allocscope::testing {

struct TorchApi {
    void* (*malloc)(std::size_t, int, void*) = nullptr;
    void (*free)(void*, std::size_t, int, void*) = nullptr;
    int (*recordStream)(void*, void*) = nullptr;
    int (*emptyCache)() = nullptr;
    int (*synchronize)() = nullptr;
    int (*setMemoryFraction)(double, int) = nullptr;
    int (*resetPeakStats)(int) = nullptr;
    int (*resetAccumulatedStats)(int) = nullptr;
    std::size_t (*statsJson)(int, char*, std::size_t) = nullptr;
    std::size_t (*memorySummary)(int, char*, std::size_t) = nullptr;
    int (*finish)() = nullptr;
    const char* (*lastError)() = nullptr;
    const char* (*sessionPath)() = nullptr;
    int (*useSimulatedDevice)(unsigned long long) = nullptr;
    int (*setPythonFrames)(int) = nullptr;
    int (*setOomRaises)(int) = nullptr;

    // Kept loaded to the end of the process (its atexit handler ends the recording).
    static TorchApi load(const std::string& path) {
        void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!lib) throw std::runtime_error(std::string("dlopen: ") + dlerror());
        TorchApi api;
        bind(lib, api.malloc, "allocscope_malloc");
        bind(lib, api.free, "allocscope_free");
        bind(lib, api.recordStream, "allocscope_record_stream");
        bind(lib, api.emptyCache, "allocscope_empty_cache");
        bind(lib, api.synchronize, "allocscope_synchronize");
        bind(lib, api.setMemoryFraction, "allocscope_set_memory_fraction");
        bind(lib, api.resetPeakStats, "allocscope_reset_peak_stats");
        bind(lib, api.resetAccumulatedStats, "allocscope_reset_accumulated_stats");
        bind(lib, api.statsJson, "allocscope_stats_json");
        bind(lib, api.memorySummary, "allocscope_memory_summary");
        bind(lib, api.finish, "allocscope_finish");
        bind(lib, api.lastError, "allocscope_last_error");
        bind(lib, api.sessionPath, "allocscope_session_path");
        bind(lib, api.useSimulatedDevice, "allocscope_use_simulated_device");
        bind(lib, api.setPythonFrames, "allocscope_set_python_frames");
        bind(lib, api.setOomRaises, "allocscope_set_oom_raises");
        return api;
    }

    // The whole text of a (device, buffer, capacity) getter, asked twice as the ABI intends.
    static std::string text(std::size_t (*getter)(int, char*, std::size_t), int device) {
        const std::size_t n = getter(device, nullptr, 0);
        std::string out(n + 1, '\0');
        getter(device, out.data(), out.size());
        out.resize(n);
        return out;
    }

private:
    template <class Fn>
    static void bind(void* lib, Fn& fn, const char* name) {
        fn = reinterpret_cast<Fn>(dlsym(lib, name));
        if (!fn) throw std::runtime_error(std::string("liballocscope_torch.so lacks ") + name);
    }
};

}  // namespace allocscope::testing
