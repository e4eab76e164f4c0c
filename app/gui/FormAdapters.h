#pragma once
// The domain behind the views' forms: PYTORCH_CUDA_ALLOC_CONF validation and formatting through
// the allocator's own parser (parseConfig / formatConfig), and a workload's parameters as
// ParamSpecs and back as `k=v` overrides.
#include <string>
#include <utility>
#include <vector>

#include "allocator/config/AllocatorConfig.h"
#include "allocator/workloads/WorkloadParams.h"
#include "views/data/FormSpecs.h"

namespace allocscope::app {

// parseConfig's verdict, PyTorch's message, each diagnostic at its position with its
// suggestion, the corrected string, and (when accepted) the values for the form.
views::ValidationResult validateConfigText(const QString& text);
// The form's values as the canonical config string (formatConfig).
QString formatConfigValues(const views::ConfigFormValues& values);
views::ConfigFormValues configFormValues(const alloc::AllocatorConfig& config);
alloc::AllocatorConfig configFromFormValues(const views::ConfigFormValues& values);

std::vector<views::ParamSpec> toParamSpecs(const std::vector<alloc::ParamSpec>& specs);
// The form's values as `name=value` overrides for WorkloadParams::resolve.
std::vector<std::pair<std::string, std::string>> paramOverrides(const views::ParamValues& values);

}  // namespace allocscope::app
