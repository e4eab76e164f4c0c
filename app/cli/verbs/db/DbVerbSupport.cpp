#include "app/cli/verbs/db/DbVerbSupport.h"

#include <cstdio>

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

std::string jsonString(std::string_view text) {
    std::string out = "\"";
    for (const char c : text) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\t': out += "\\t"; break;
            case '\r': out += "\\r"; break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
                    out += buf;
                } else {
                    out += c;
                }
        }
    }
    return out + "\"";
}

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
