// `allocscope-cli gpus`: the simulated GPU presets and any real CUDA devices found at run time.
#include <ostream>

#include "allocator/device/GpuPresets.h"
#include "allocator/device/CudaProbe.h"
#include "app/cli/VerbRegistry.h"

namespace allocscope::cli {
namespace {

int runGpus(VerbContext& ctx) {
    if (!ctx.args.empty()) {
        ctx.err << "allocscope-cli: gpus takes no arguments (got '" << ctx.args.front() << "')\n";
        return kExitUsage;
    }
    for (const alloc::GpuPreset& preset : alloc::gpuPresets()) {
        ctx.out << preset.name << "\t" << preset.totalMemory << "\tsimulated: " << preset.description << "\n";
    }
    const alloc::CudaProbeResult probe = alloc::probeCudaDevices();
    for (const alloc::CudaDeviceDesc& dev : probe.devices) {
        ctx.out << "cuda:" << dev.index << "\t" << dev.totalMemory << "\treal: " << dev.name << "\n";
    }
    if (probe.devices.empty()) ctx.err << "no real GPU: " << probe.reason << "\n";
    return kExitOk;
}

const VerbRegistration kRegistration{Verb{
    "gpus", "list simulated GPU presets and real CUDA devices",
    "usage: allocscope-cli gpus\n\nPrints one line per GPU: name, total memory in bytes, description.\n"
    "Real CUDA devices appear as cuda:N when a driver and a GPU are present.",
    runGpus}};

}  // namespace
}  // namespace allocscope::cli
