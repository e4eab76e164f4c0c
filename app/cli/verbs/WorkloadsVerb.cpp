// `allocscope-cli workloads [--json]`: the demo workloads, their parameters and GPU presets.
#include <ostream>
#include <sstream>

#include "allocator/compare/CompareReport.h"
#include "allocator/workloads/WorkloadRegistry.h"
#include "app/cli/VerbRegistry.h"

namespace allocscope::cli {
namespace {

using alloc::CompareReport;

std::string paramRange(const alloc::ParamSpec& p) {
    switch (p.type) {
    case alloc::ParamType::Int:
    case alloc::ParamType::Double: {
        std::ostringstream os;
        os.precision(15);
        os << p.min << ".." << p.max;
        return os.str();
    }
    case alloc::ParamType::Bool: return "true|false";
    case alloc::ParamType::Choice: {
        std::string s;
        for (const std::string& c : p.choices) s += (s.empty() ? "" : "|") + c;
        return s;
    }
    }
    return "";
}

int runWorkloads(VerbContext& ctx) {
    bool json = false;
    for (const std::string& a : ctx.args) {
        if (a == "--json") {
            json = true;
        } else {
            ctx.err << "allocscope-cli: unknown argument '" << a << "' (workloads; see `allocscope-cli help workloads`)\n";
            return kExitUsage;
        }
    }
    const auto& all = alloc::WorkloadRegistry::instance().all();
    if (json) {
        ctx.out << "[";
        for (std::size_t i = 0; i < all.size(); ++i) {
            const alloc::Workload& w = *all[i];
            ctx.out << (i ? "," : "") << "\n{\"name\":" << CompareReport::jsonString(w.name())
                    << ",\"summary\":" << CompareReport::jsonString(w.summary())
                    << ",\"description\":" << CompareReport::jsonString(w.description())
                    << ",\"gpu\":" << CompareReport::jsonString(w.defaultGpu())
                    << ",\"uses_seed\":" << (w.usesSeed() ? "true" : "false") << ",\"params\":[";
            const auto params = w.params();
            for (std::size_t k = 0; k < params.size(); ++k) {
                const alloc::ParamSpec& p = params[k];
                ctx.out << (k ? "," : "") << "{\"name\":" << CompareReport::jsonString(p.name)
                        << ",\"type\":\"" << alloc::paramTypeName(p.type) << "\",\"default\":"
                        << CompareReport::jsonString(p.defaultValue);
                if (p.type == alloc::ParamType::Int || p.type == alloc::ParamType::Double) {
                    ctx.out << ",\"min\":" << p.min << ",\"max\":" << p.max;
                }
                if (p.type == alloc::ParamType::Choice) {
                    ctx.out << ",\"choices\":[";
                    for (std::size_t c = 0; c < p.choices.size(); ++c) {
                        ctx.out << (c ? "," : "") << CompareReport::jsonString(p.choices[c]);
                    }
                    ctx.out << "]";
                }
                ctx.out << ",\"help\":" << CompareReport::jsonString(p.help) << "}";
            }
            ctx.out << "]}";
        }
        ctx.out << "\n]\n";
        return kExitOk;
    }
    for (const auto& w : all) {
        ctx.out << w->name() << "  (gpu " << w->defaultGpu() << (w->usesSeed() ? ", seeded" : "") << ")\n  "
                << w->summary() << "\n";
        for (const alloc::ParamSpec& p : w->params()) {
            ctx.out << "    " << p.name << "=" << p.defaultValue << "  [" << alloc::paramTypeName(p.type) << " "
                    << paramRange(p) << "]  " << p.help << "\n";
        }
    }
    return kExitOk;
}

const VerbRegistration kRegistration{Verb{
    "workloads", "list the demo workloads and their parameters",
    "usage: allocscope-cli workloads [--json]\n\nLists every demo workload: name, default GPU preset, "
    "whether it uses --seed, and each parameter (default, type, range, help).\n--json prints the same "
    "as a JSON array, with each workload's full description.",
    runWorkloads}};

}  // namespace
}  // namespace allocscope::cli
