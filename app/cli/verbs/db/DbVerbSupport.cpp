#include "app/cli/verbs/db/DbVerbSupport.h"

#include "allocator/compare/CompareReport.h"
#include "storage/formats/FormatError.h"

namespace allocscope::cli {

int reportSessionError(VerbContext& ctx, const storage::SessionError& error) {
    ctx.err << "allocscope-cli: " << error.problem() << " (" << error.where() << ")\n";
    return kExitBadInput;
}

int withInputErrors(VerbContext& ctx, const std::function<int()>& body) {
    try {
        return body();
    } catch (const storage::SessionError& e) {
        return reportSessionError(ctx, e);
    } catch (const formats::FormatError& e) {
        ctx.err << "allocscope-cli: " << e.problem() << " (" << e.location() << ")\n";
        return kExitBadInput;
    }
}

std::string jsonString(std::string_view text) { return alloc::CompareReport::jsonString(std::string(text)); }

bool parseCount(const std::string& text, std::uint64_t& value) {
    if (text.empty() || text.size() > 19) return false;
    value = 0;
    for (const char c : text) {
        if (c < '0' || c > '9') return false;
        value = value * 10 + static_cast<std::uint64_t>(c - '0');
    }
    return true;
}

}  // namespace allocscope::cli
