#include "app/cli/VerbErrors.h"

#include <ostream>

namespace allocscope::cli {

int usageError(VerbContext& ctx, std::string_view verb, const std::string& what) {
    ctx.err << "allocscope-cli: " << what << " (" << verb << "; see `allocscope-cli help " << verb << "`)\n";
    return kExitUsage;
}

int badInput(VerbContext& ctx, const std::string& what, const std::string& where) {
    ctx.err << "allocscope-cli: " << what << " (" << where << ")\n";
    return kExitBadInput;
}

int takeWorkload(VerbContext& ctx, std::string_view verb, const std::string& arg, std::string& workload, std::size_t& i) {
    if (arg.size() > 1 && arg[0] == '-') return usageError(ctx, verb, "unknown option '" + arg + "'");
    if (!workload.empty()) return usageError(ctx, verb, "more than one WORKLOAD given ('" + arg + "')");
    workload = arg;
    ++i;
    return kExitOk;
}

int requireWorkload(VerbContext& ctx, std::string_view verb, const std::string& workload) {
    if (!workload.empty()) return kExitOk;
    return usageError(ctx, verb, std::string(verb) + " needs a WORKLOAD (see `allocscope-cli workloads`)");
}

bool parseSeed(const std::string& text, std::uint64_t& seed) {
    if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos) return false;
    seed = std::stoull(text);
    return true;
}

}  // namespace allocscope::cli
