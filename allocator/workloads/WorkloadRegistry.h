#pragma once
// Every demo workload, by name. The GUI and the CLI list and run workloads only through here.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "allocator/workloads/Workload.h"

namespace allocscope::alloc {

class WorkloadRegistry {
public:
    static const WorkloadRegistry& instance();
    const std::vector<std::unique_ptr<Workload>>& all() const { return workloads_; }
    const Workload* find(std::string_view name) const;
    // find(), or throw WorkloadError("unknown workload 'x' (did you mean 'y'?)", name).
    const Workload& get(std::string_view name) const;

private:
    WorkloadRegistry();
    std::vector<std::unique_ptr<Workload>> workloads_;
};

}  // namespace allocscope::alloc
