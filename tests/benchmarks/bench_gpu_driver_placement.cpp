// Measures where the CUDA driver places memory: runs one sequence of cudaMalloc / cudaFree and
// expandable-segment calls (cuMemAddressReserve / cuMemCreate / cuMemMap / cuMemUnmap /
// cuMemAddressFree) on a real GPU and prints every address the driver returned. The corpus in
// tests/data/driver-placement/ was made with it (tests/gpu/run_driver_placement.sh runs every
// sequence several times, each in a fresh process, to see whether placement is deterministic).
//
//   bench_gpu_driver_placement [--smoke] SEQUENCE_FILE
//
// Sequence file (one call per line, '#' starts a comment; ids name ranges; sizes in bytes):
//   m ID SIZE            cudaMalloc(SIZE)                      -> prints "m ID SIZE 0xADDRESS"
//   f ID                 cudaFree
//   r ID PAGE            cuMemAddressReserve of PyTorch 2.11's expandable reservation for pages
//                        of PAGE bytes: ceil(1.125 * total memory / PAGE) pages -> "r ID SIZE 0xBASE"
//   p ID OFFSET SIZE     cuMemCreate(SIZE) mapped at BASE + OFFSET, read/write for the device
//   u ID OFFSET SIZE     unmap and release what `p` mapped there
//   x ID                 cuMemAddressFree (unmapping whatever is still mapped first)
// The output starts with the GPU's name, the driver and runtime versions, the total memory and
// the allocation granularity. Without a GPU (or a driver) it prints "no GPU: <why>" and exits 0;
// --smoke only checks that, and that the file parses. Bad lines: "FILE:LINE: <what>", exit 2.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#ifdef ALLOCSCOPE_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "allocator/device/cuda/CudaDriverApi.h"
#include "allocator/device/cuda/CudaError.h"
#endif

namespace {

struct Call {
    char op = 0;
    std::string id;
    std::uint64_t a = 0;  // size (m), page (r), offset (p, u)
    std::uint64_t b = 0;  // size (p, u)
};

bool parse(const char* path, std::vector<Call>& calls) {
    std::ifstream in(path);
    if (!in) {
        std::fprintf(stderr, "%s: cannot be read\n", path);
        return false;
    }
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
        if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
        std::istringstream words(line);
        std::string op;
        if (!(words >> op)) continue;
        Call c;
        c.op = op.size() == 1 ? op[0] : '?';
        bool ok = static_cast<bool>(words >> c.id);
        if (c.op == 'm' || c.op == 'r') ok = ok && static_cast<bool>(words >> c.a);
        else if (c.op == 'p' || c.op == 'u') ok = ok && static_cast<bool>(words >> c.a >> c.b);
        else if (c.op != 'f' && c.op != 'x') ok = false;
        std::string extra;
        if (!ok || (words >> extra)) {
            std::fprintf(stderr, "%s:%d: expected 'm ID SIZE', 'f ID', 'r ID PAGE', 'p|u ID OFFSET SIZE' or 'x ID', got '%s'\n",
                         path, number, line.c_str());
            return false;
        }
        calls.push_back(c);
    }
    return true;
}

#ifdef ALLOCSCOPE_HAVE_CUDA
using allocscope::alloc::CudaDriverApi;
using allocscope::alloc::CudaError;

void checkRuntime(cudaError_t status, const std::string& call) {
    if (status != cudaSuccess) throw CudaError(call, static_cast<int>(status), cudaGetErrorName(status), cudaGetErrorString(status));
}

struct Reservation {
    CUdeviceptr base = 0;
    std::uint64_t size = 0;
    std::map<std::uint64_t, std::pair<CUmemGenericAllocationHandle, std::uint64_t>> mapped;  // offset -> handle, size
};

int run(const std::vector<Call>& calls) {
    checkRuntime(cudaSetDevice(0), "cudaSetDevice(0)");
    checkRuntime(cudaFree(nullptr), "cudaFree(0) (context creation)");
    cudaDeviceProp prop{};
    checkRuntime(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    int driver = 0;
    int runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    const CudaDriverApi& api = CudaDriverApi::instance();
    CUmemAllocationProp vm{};
    vm.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    vm.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    vm.location.id = 0;
    std::size_t granularity = 0;
    api.check(api.memGetAllocationGranularity(&granularity, &vm, CU_MEM_ALLOC_GRANULARITY_MINIMUM), "cuMemGetAllocationGranularity");
    std::printf("gpu %s\ndriver %d\nruntime %d\ntotal %zu\ngranularity %zu\n", prop.name, driver, runtime,
                prop.totalGlobalMem, granularity);

    std::map<std::string, void*> segments;
    std::map<std::string, Reservation> reservations;
    CUmemAccessDesc access{};
    access.location = vm.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    for (const Call& c : calls) {
        switch (c.op) {
            case 'm': {
                void* p = nullptr;
                checkRuntime(cudaMalloc(&p, c.a), "cudaMalloc(" + std::to_string(c.a) + ") for " + c.id);
                segments[c.id] = p;
                std::printf("m %s %llu 0x%llx\n", c.id.c_str(), static_cast<unsigned long long>(c.a),
                            static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(p)));
                break;
            }
            case 'f': {
                auto it = segments.find(c.id);
                if (it == segments.end()) throw CudaError("f " + c.id + ": no live segment of that id");
                checkRuntime(cudaFree(it->second), "cudaFree of " + c.id);
                segments.erase(it);
                break;
            }
            case 'r': {
                const std::uint64_t total = prop.totalGlobalMem;
                const std::uint64_t size = (total + total / 8 + c.a - 1) / c.a * c.a;
                Reservation r;
                r.size = size;
                api.check(api.memAddressReserve(&r.base, size, 0, 0, 0), "cuMemAddressReserve for " + c.id);
                std::printf("r %s %llu 0x%llx\n", c.id.c_str(), static_cast<unsigned long long>(size),
                            static_cast<unsigned long long>(r.base));
                reservations[c.id] = std::move(r);
                break;
            }
            case 'p':
            case 'u':
            case 'x': {
                auto it = reservations.find(c.id);
                if (it == reservations.end()) throw CudaError(std::string(1, c.op) + " " + c.id + ": no live reservation of that id");
                Reservation& r = it->second;
                if (c.op == 'p') {
                    CUmemGenericAllocationHandle h = 0;
                    api.check(api.memCreate(&h, c.b, &vm, 0), "cuMemCreate for " + c.id);
                    api.check(api.memMap(r.base + c.a, c.b, 0, h, 0), "cuMemMap for " + c.id);
                    api.check(api.memSetAccess(r.base + c.a, c.b, &access, 1), "cuMemSetAccess for " + c.id);
                    r.mapped[c.a] = {h, c.b};
                    break;
                }
                for (auto m = r.mapped.begin(); m != r.mapped.end();) {
                    if (c.op == 'u' && m->first != c.a) {
                        ++m;
                        continue;
                    }
                    api.check(api.memUnmap(r.base + m->first, m->second.second), "cuMemUnmap for " + c.id);
                    api.check(api.memRelease(m->second.first), "cuMemRelease for " + c.id);
                    m = r.mapped.erase(m);
                }
                if (c.op == 'x') {
                    api.check(api.memAddressFree(r.base, r.size), "cuMemAddressFree for " + c.id);
                    reservations.erase(it);
                }
                break;
            }
            default:
                break;
        }
    }
    // Leave nothing behind for the next process's measurements (the driver frees a process's
    // memory at exit anyway; this keeps compute-sanitizer quiet).
    for (auto& [id, p] : segments) cudaFree(p);
    for (auto& [id, r] : reservations) {
        for (auto& [offset, mapping] : r.mapped) {
            api.memUnmap(r.base + offset, mapping.second);
            api.memRelease(mapping.first);
        }
        api.memAddressFree(r.base, r.size);
    }
    return 0;
}
#endif

}  // namespace

int main(int argc, char** argv) {
    bool smoke = false;
    const char* path = nullptr;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--smoke") {
            smoke = true;
        } else if (path == nullptr && !arg.empty() && arg[0] != '-') {
            path = argv[i];
        } else {
            std::fprintf(stderr, "usage: bench_gpu_driver_placement [--smoke] SEQUENCE_FILE\n");
            return 2;
        }
    }
    if (path == nullptr && !smoke) {
        std::fprintf(stderr, "usage: bench_gpu_driver_placement [--smoke] SEQUENCE_FILE\n");
        return 2;
    }
    std::vector<Call> calls;
    if (path != nullptr && !parse(path, calls)) return 2;
#ifdef ALLOCSCOPE_HAVE_CUDA
    int count = 0;
    const cudaError_t probe = cudaGetDeviceCount(&count);
    if (probe != cudaSuccess || count == 0) {
        cudaGetLastError();
        std::printf("no GPU: %s\n", probe != cudaSuccess ? cudaGetErrorString(probe) : "no CUDA device");
        return 0;
    }
    if (smoke) return 0;
    try {
        return run(calls);
    } catch (const CudaError& e) {
        std::fprintf(stderr, "bench_gpu_driver_placement: %s\n", e.what());
        return 1;
    }
#else
    std::printf("no GPU: built without the CUDA toolkit\n");
    return 0;
#endif
}
