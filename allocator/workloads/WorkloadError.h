#pragma once
// The error every workload API throws for bad input.
#include <stdexcept>
#include <string>
#include <utility>

namespace allocscope::alloc {

// A bad parameter, a bad value, an unknown workload: `what` went wrong, `where` (the offending
// argument) — the CLI prints "allocscope-cli: <what> (<where>)".
class WorkloadError : public std::runtime_error {
public:
    WorkloadError(const std::string& what, std::string where)
        : std::runtime_error(what), where_(std::move(where)) {}
    const std::string& where() const { return where_; }

private:
    std::string where_;
};

}  // namespace allocscope::alloc
