#pragma once
// `run WORKLOAD --gpu cuda:N`: the program runs through the caching allocator on real GPU N.
// A simulated GPU of the same total memory decides every address (so the run decides exactly as
// `run --total-memory <that size>` does and stays reproducible) while CudaDevice obtains and,
// with --touch, writes real memory for each decided segment. The report adds which GPU it ran on,
// the real driver calls, and how often the real addresses would have ordered a new segment
// differently among the live ones (a point where a run on raw pointers could decide otherwise).
// Program streams, record_stream and pending frees run on real CUDA streams and events
// (CudaStreamEvents). backend:cudaMallocAsync runs through real cudaMallocAsync / cudaFreeAsync.
#include <string>

#include "allocator/compare/ComparisonEngine.h"
#include "allocator/compare/RunMetrics.h"
#include "allocator/core/Op.h"
#include "app/cli/DeviceOptions.h"

namespace allocscope::cli {

// false + error ("no GPU: ..." or the CUDA call that failed) when it could not run. `notes`
// receives the lines the report adds about the real GPU.
bool runOnRealGpu(const ResolvedDevice& device, const alloc::Program& program, const alloc::CompareConfig& config,
                  const alloc::CompareDevice& target, alloc::CompareOptions options, alloc::RunMetrics& metrics,
                  std::string& notes, std::string& error);

}  // namespace allocscope::cli
