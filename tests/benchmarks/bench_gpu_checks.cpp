// The CUDA backend's behaviour checks (tests/gpu/CudaChecks.h) as a plain executable, for the GPU
// machine, which has no Qt (the same checks run as the Qt test TestCudaDevice where Qt is).
// Also the workload compute-sanitizer runs: every path of CudaDevice (cudaMalloc, the
// virtual-memory API, translation, touch) and of CudaAsyncBackend.
//
//   bench_gpu_checks [--smoke] [--except NAME]...
//   Without a GPU: prints "no GPU: ..." and exits 0. --except skips a check (compute-sanitizer
//   runs skip outOfMemoryIsNotAnError, whose deliberate cudaMalloc OOM it reports as an API error).
// Prints one PASS/FAIL line per check and "N passed, M failed"; exit 1 if any failed.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#ifdef ALLOCSCOPE_HAVE_CUDA
#include "allocator/device/cuda/CudaDevice.h"
#include "tests/gpu/CudaChecks.h"
#endif

int main(int argc, char** argv) {
    std::vector<std::string> skipped;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--except" && i + 1 < argc) {
            skipped.push_back(argv[++i]);
        } else if (arg != "--smoke") {
            std::fprintf(stderr, "bench_gpu_checks: bad argument '%s'\n", argv[i]);
            return 2;
        }
    }
#ifdef ALLOCSCOPE_HAVE_CUDA
    if (auto reason = allocscope::alloc::CudaDevice::unavailableReason(0)) {
        std::printf("%s\n", reason->c_str());
        return 0;
    }
    int passed = 0;
    int failed = 0;
    for (const auto& check : allocscope::gpu::checks::all()) {
        if (std::find(skipped.begin(), skipped.end(), check.name) != skipped.end()) {
            std::printf("SKIP %s\n", check.name);
            continue;
        }
        const std::string failure = allocscope::gpu::checks::run(check);
        if (failure.empty()) {
            ++passed;
            std::printf("PASS %s\n", check.name);
        } else {
            ++failed;
            std::printf("FAIL %s: %s\n", check.name, failure.c_str());
        }
        std::fflush(stdout);
    }
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
#else
    std::printf("no GPU: built without CUDA support\n");
    return 0;
#endif
}
