#pragma once
// What the session verbs (info, export, import) share: error printing in the CLI's one-line
// format and JSON string escaping.
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

#include "app/cli/VerbRegistry.h"
#include "storage/session/SessionError.h"

namespace allocscope::cli {

// "allocscope-cli: <what> (<where>)", exit code 1.
int reportSessionError(VerbContext& ctx, const storage::SessionError& error);
// Runs `body`; a bad session or trace file it meets (SessionError, formats::FormatError) is reported
// in the CLI's one-line format with exit code 1.
int withInputErrors(VerbContext& ctx, const std::function<int()>& body);
std::string jsonString(std::string_view text);
// Parses an unsigned integer argument; false if it is not one.
bool parseCount(const std::string& text, std::uint64_t& value);

}  // namespace allocscope::cli
