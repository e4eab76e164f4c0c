#pragma once
// What the allocator benchmarks share: this thread's CPU time (robust on a shared, loaded
// machine, where wall time also counts other processes) and the --smoke flag every benchmark takes.
#include <cstring>
#include <ctime>

namespace allocscope::bench {

inline double threadCpuNs() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

inline bool smokeRequested(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--smoke") == 0) return true;
    }
    return false;
}

}  // namespace allocscope::bench
