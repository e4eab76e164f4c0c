// Calibration of the simulated backend:cudaMallocAsync model (AsyncBackendModel) against the real
// thing. For every demo workload (default parameters, seed 1) it writes
//   DIR/W.ops        the program, one op per line, for tests/gpu/async_calibration.py, which runs
//                    it under PyTorch with PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
//                    (PyTorch's own numbers: memory_stats() at the end and the peaks);
//   DIR/model.tsv    the model's peaks on an H100 (85017493504 B, the h100-80gb preset);
//   DIR/pool.tsv     with a GPU: the same program on the real default memory pool through
//                    CudaAsyncBackend (cudaMallocAsync / cudaFreeAsync, one stream).
// Op lines: "alloc ID SIZE STREAM", "free ID", "record_stream ID STREAM", "complete ID",
// "sync", "empty_cache", "fraction F", "reset_peak", "reset_accumulated" (phases are left out).
//
//   bench_gpu_async_calibration [--smoke] [--out-dir DIR] [WORKLOAD...]
//   --smoke: fragmentation-101 only, into the current directory.
#include <cstdio>
#include <exception>
#include <fstream>
#include <string>
#include <vector>

#include "allocator/compare/ComparisonEngine.h"
#include "allocator/config/ConfigParser.h"
#include "allocator/workloads/WorkloadRegistry.h"
#ifdef ALLOCSCOPE_HAVE_CUDA
#include "allocator/device/cuda/CudaAsyncBackend.h"
#include "allocator/device/cuda/CudaDevice.h"
#endif

namespace {

using namespace allocscope::alloc;

bool writeOps(const std::string& path, const Program& program) {
    std::ofstream out(path, std::ios::trunc);
    for (const Op& op : program.ops) {
        switch (op.kind) {
        case OpKind::Alloc: out << "alloc " << op.id << ' ' << op.size << ' ' << op.stream << '\n'; break;
        case OpKind::Free: out << "free " << op.id << '\n'; break;
        case OpKind::RecordStream: out << "record_stream " << op.id << ' ' << op.stream << '\n'; break;
        case OpKind::CompletePending: out << "complete " << op.id << '\n'; break;
        case OpKind::Synchronize: out << "sync\n"; break;
        case OpKind::EmptyCache: out << "empty_cache\n"; break;
        case OpKind::SetMemoryFraction: out << "fraction " << op.fraction << '\n'; break;
        case OpKind::ResetPeakStats: out << "reset_peak\n"; break;
        case OpKind::ResetAccumulatedStats: out << "reset_accumulated\n"; break;
        case OpKind::Phase: break;
        default: break;  // private pools: the async backend has none
        }
    }
    return static_cast<bool>(out);
}

[[maybe_unused]] std::int64_t peak(const DeviceStats& s, bool reserved) {
    return reserved ? s.reserved_bytes[kAggregate].peak : s.allocated_bytes[kAggregate].peak;
}

}  // namespace

int main(int argc, char** argv) {
    std::string dir = ".";
    std::vector<std::string> names;
    bool smoke = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--smoke") {
            smoke = true;
        } else if (arg == "--out-dir" && i + 1 < argc) {
            dir = argv[++i];
        } else if (!arg.empty() && arg[0] != '-') {
            names.push_back(arg);
        } else {
            std::fprintf(stderr, "usage: bench_gpu_async_calibration [--smoke] [--out-dir DIR] [WORKLOAD...]\n");
            return 2;
        }
    }
    if (smoke && names.empty()) names.push_back("fragmentation-101");
    if (names.empty()) {
        for (const auto& w : WorkloadRegistry::instance().all()) names.push_back(w->name());
    }
    bool gpu = false;
#ifdef ALLOCSCOPE_HAVE_CUDA
    const auto reason = CudaDevice::unavailableReason(0);
    gpu = !reason;
    if (reason) std::printf("%s: the real pool is not measured\n", reason->c_str());
#else
    std::printf("no GPU: built without CUDA support: the real pool is not measured\n");
#endif
    std::ofstream model(dir + "/model.tsv", std::ios::trunc);
    std::ofstream pool;
    if (gpu) pool.open(dir + "/pool.tsv", std::ios::trunc);
    model << "workload\tpeak_allocated\tpeak_reserved\tops\n";
    if (gpu) pool << "workload\tpeak_allocated\tpeak_reserved\tooms\n";
    const CompareConfig async{"backend:cudaMallocAsync", parseConfig("backend:cudaMallocAsync").config};
    try {
        for (const std::string& name : names) {
            const Workload& workload = WorkloadRegistry::instance().get(name);
            const GeneratedProgram generated = workload.generate(workload.resolve(), 1);
            if (!writeOps(dir + "/" + name + ".ops", generated.program)) {
                std::fprintf(stderr, "bench_gpu_async_calibration: cannot write %s/%s.ops\n", dir.c_str(), name.c_str());
                return 1;
            }
            const RunMetrics m = ComparisonEngine::runOne(generated.program, async, CompareDevice{});
            model << name << '\t' << m.peakAllocated << '\t' << m.peakReserved << '\t' << m.ops << '\n';
            std::printf("%-22s model: peak allocated %llu, peak reserved %llu\n", name.c_str(),
                        static_cast<unsigned long long>(m.peakAllocated), static_cast<unsigned long long>(m.peakReserved));
#ifdef ALLOCSCOPE_HAVE_CUDA
            if (gpu) {
                CudaAsyncBackend backend(0);
                const CudaAsyncRunResult r = backend.run(generated.program, false);
                const DeviceStats s = backend.stats();
                pool << name << '\t' << peak(s, false) << '\t' << peak(s, true) << '\t' << r.ooms << '\n';
                std::printf("%-22s pool:  peak allocated %lld, peak reserved %lld\n", name.c_str(),
                            static_cast<long long>(peak(s, false)), static_cast<long long>(peak(s, true)));
            }
#endif
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_gpu_async_calibration: %s\n", e.what());
        return 1;
    }
    return model && (!gpu || pool) ? 0 : 1;
}
