#pragma once
// The CLI's one-line errors, the same for every verb, and the argument values several verbs read
// alike. A usage error (exit 2) names the verb and where its help is; bad input (exit 1) names what
// is wrong and where: the argument, the file and byte, the session.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "app/cli/VerbRegistry.h"

namespace allocscope::cli {

// "allocscope-cli: <what> (<verb>; see `allocscope-cli help <verb>`)", returns kExitUsage.
int usageError(VerbContext& ctx, std::string_view verb, const std::string& what);
// "allocscope-cli: <what> (<where>)", returns kExitBadInput.
int badInput(VerbContext& ctx, const std::string& what, const std::string& where);
// The end of a WORKLOAD verb's option loop (run, compare, recommend): `arg` is an unknown option
// (a usage error), the WORKLOAD (kept in `workload`; `i` moves past it) or a second WORKLOAD (a
// usage error). kExitOk when `arg` was taken.
int takeWorkload(VerbContext& ctx, std::string_view verb, const std::string& arg, std::string& workload, std::size_t& i);
// After the loop: "<verb> needs a WORKLOAD (see `allocscope-cli workloads`)" when none was given
// (returns its exit code), else kExitOk.
int requireWorkload(VerbContext& ctx, std::string_view verb, const std::string& workload);
// A --seed value: 1 to 19 decimal digits (so that every accepted value fits in 64 bits).
bool parseSeed(const std::string& text, std::uint64_t& seed);

}  // namespace allocscope::cli
