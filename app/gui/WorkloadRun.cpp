#include "app/gui/WorkloadRun.h"

#include <string>
#include <utility>

#include "allocator/workloads/WorkloadRegistry.h"
#include "app/gui/BackgroundJob.h"
#include "app/gui/FormAdapters.h"
#include "storage/session/ProgramRecording.h"
#include "storage/session/SessionWriter.h"

namespace allocscope::app {

BackgroundJob* WorkloadRun::job(storage::SessionWriter& writer, const RunChoice& choice, const alloc::AllocatorConfig& config,
                                std::function<void(int run, const QString& oom)> recorded, QObject* parent) {
    storage::SessionWriter* target = &writer;
    return new BackgroundJob(
        QObject::tr("Running %1").arg(choice.workload),
        [target, c = choice, config, recorded = std::move(recorded)](BackgroundJob& self) {
            const alloc::Workload& workload = alloc::WorkloadRegistry::instance().get(c.workload.toStdString());
            const alloc::WorkloadParams params = workload.resolve(paramOverrides(c.params));
            const alloc::GeneratedProgram generated = workload.generate(params, c.seed);
            storage::RecordTarget run;
            run.info.name = workload.name();
            run.info.sourceKind = "demo";
            run.info.source = workload.name() + " " + params.text() + (workload.usesSeed() ? " seed=" + std::to_string(c.seed) : std::string());
            run.info.config = c.config.toStdString();
            run.info.gpu = c.gpuName.toStdString();
            run.info.totalMemory = c.totalMemory;
            run.config = config;
            run.totalMemory = c.totalMemory;
            run.otherMemory = c.otherMemory;
            const storage::RecordedRun stored = storage::recordProgram(*target, generated.program, &generated.stacks, run,
                                                                       [&self](std::uint64_t done, std::uint64_t total) {
                                                                           self.reportProgress(done, total);
                                                                           return !self.isCancelled();
                                                                       });
            target->flush();
            const int number = stored.runNumber;
            const QString oom = stored.result.ooms.empty() ? QString() : QString::fromStdString(stored.result.ooms.front().message);
            self.deliver([recorded, number, oom] { recorded(number, oom); });
        },
        parent);
}

}  // namespace allocscope::app
