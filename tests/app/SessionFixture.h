#pragma once
// Test sessions made the way the app makes them: a demo workload recorded with recordProgram.
#include <QString>

#include <string>

#include "allocator/config/ConfigParser.h"
#include "allocator/device/GpuPresets.h"
#include "allocator/workloads/WorkloadRegistry.h"
#include "storage/session/ProgramRecording.h"
#include "storage/session/SessionWriter.h"

namespace testing {

// Records fragmentation-101 (560 events with the defaults) once per config into `path`.
inline void recordFrag101(const QString& path, const std::vector<std::string>& configs) {
    using namespace allocscope;
    storage::SessionWriter writer(path.toStdString());
    const alloc::Workload& workload = alloc::WorkloadRegistry::instance().get("fragmentation-101");
    const alloc::GeneratedProgram program = workload.generate(workload.resolve(), 1);
    const alloc::GpuPreset preset = *alloc::findGpuPreset("h100-80gb");
    for (const std::string& config : configs) {
        storage::RecordTarget target;
        target.info.name = "fragmentation-101";
        target.info.config = config;
        target.info.gpu = preset.name;
        target.info.totalMemory = preset.totalMemory;
        target.config = alloc::parseConfig(config).config;
        target.totalMemory = preset.totalMemory;
        target.otherMemory = preset.contextMemory;
        storage::recordProgram(writer, program.program, &program.stacks, target);
    }
    writer.flush();
}

}  // namespace testing
