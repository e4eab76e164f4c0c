// A recording child for the crash-safety test: records a long random program into the session
// given as argv[1] and prints "committed N" (N = events committed so far) after every commit,
// so the test can kill it at a known point. Never finishes on its own before being killed
// (it loops over the program until killed, or for a minute at most).
#include <chrono>
#include <cstdio>

#include "StorageTestSupport.h"

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: session_record_helper SESSION\n");
        return 2;
    }
    using namespace allocscope;
    storage::SessionWriter writer(argv[1]);
    alloc::SimulatedDevice device(2ull << 30, 0);
    alloc::CachingAllocator allocator(alloc::AllocatorConfig{}, device, nullptr);
    storage::RecorderOptions options;
    options.batchEvents = 256;
    options.keyframeInterval = 1024;
    options.onCommitted = [](std::uint64_t committed) {
        std::printf("committed %llu\n", static_cast<unsigned long long>(committed));
        std::fflush(stdout);
    };
    storage::RunInfo info;
    info.name = "killed recording";
    storage::SessionRecorder recorder(writer, info, allocator.stats(), options);
    alloc::CachingAllocator recorded(alloc::AllocatorConfig{}, device, &recorder);
    const alloc::Program program = storagetest::randomProgram(5, 20000);
    const auto start = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - start < std::chrono::minutes(1)) {
        alloc::ProgramRunner runner(recorded);
        alloc::ProgramResult result;
        for (std::size_t i = 0; i < program.ops.size(); ++i) {
            if (!runner.apply(program.ops[i], i, result) && !(program.ops[i].kind == alloc::OpKind::CompletePending)) break;
            result.error.reset();
            recorder.syncStats(recorded.stats());
        }
        recorded.emptyCache();
    }
    return 0;
}
