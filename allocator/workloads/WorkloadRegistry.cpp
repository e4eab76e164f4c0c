#include "allocator/workloads/WorkloadRegistry.h"

#include "allocator/workloads/CudaGraphsWorkload.h"
#include "allocator/workloads/Fragmentation101Workload.h"
#include "allocator/workloads/LlmInferenceVarlenWorkload.h"
#include "allocator/workloads/LlmTrainingWorkload.h"
#include "allocator/workloads/ModelLoadWorkload.h"
#include "allocator/workloads/MultiModelSharingWorkload.h"
#include "allocator/workloads/MultiStreamWorkload.h"
#include "allocator/workloads/OomWithFreeMemoryWorkload.h"
#include "allocator/workloads/RandomMixWorkload.h"

namespace allocscope::alloc {

WorkloadRegistry::WorkloadRegistry() {
    workloads_.push_back(std::make_unique<Fragmentation101Workload>());
    workloads_.push_back(std::make_unique<OomWithFreeMemoryWorkload>());
    workloads_.push_back(std::make_unique<LlmTrainingWorkload>());
    workloads_.push_back(std::make_unique<LlmInferenceVarlenWorkload>());
    workloads_.push_back(std::make_unique<ModelLoadWorkload>());
    workloads_.push_back(std::make_unique<MultiModelSharingWorkload>());
    workloads_.push_back(std::make_unique<MultiStreamWorkload>());
    workloads_.push_back(std::make_unique<RandomMixWorkload>());
    workloads_.push_back(std::make_unique<CudaGraphsWorkload>());
}

const WorkloadRegistry& WorkloadRegistry::instance() {
    static const WorkloadRegistry registry;
    return registry;
}

const Workload* WorkloadRegistry::find(std::string_view name) const {
    for (const auto& w : workloads_) {
        if (w->name() == name) return w.get();
    }
    return nullptr;
}

const Workload& WorkloadRegistry::get(std::string_view name) const {
    if (const Workload* w = find(name)) return *w;
    std::string what = "unknown workload '" + std::string(name) + "'";
    // Suggest a workload whose name shares a prefix or contains the text.
    for (const auto& w : workloads_) {
        const std::string n = w->name();
        if (!name.empty() && (n.find(name) != std::string::npos || name.find(n.substr(0, 4)) == 0)) {
            what += " (did you mean '" + n + "'?)";
            break;
        }
    }
    what += "; try: allocscope-cli workloads";
    throw WorkloadError(what, std::string(name));
}

}  // namespace allocscope::alloc
