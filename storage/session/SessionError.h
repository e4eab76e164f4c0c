#pragma once
// The one error type of the session layer: what went wrong and where (a file, a run, a table),
// so callers print "allocscope-cli: <what> (<where>)" without parsing text.
#include <stdexcept>
#include <string>

namespace allocscope::storage {

class SessionError : public std::runtime_error {
public:
    SessionError(std::string what, std::string where);
    // The problem alone, without the location.
    const std::string& problem() const { return problem_; }
    const std::string& where() const { return where_; }

private:
    std::string problem_;
    std::string where_;
};

}  // namespace allocscope::storage
