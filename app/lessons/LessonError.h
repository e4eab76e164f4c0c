#pragma once
// The one error of the lesson engine: what is wrong, and where (the lesson file, the key inside
// it, a line and column or a column inside a rule), so the CLI can print
// "allocscope-cli: <what> (<where>)" and the GUI can show the same two parts.
#include <stdexcept>
#include <string>

namespace allocscope::app {

class LessonError : public std::runtime_error {
public:
    LessonError(std::string what, std::string where)
        : std::runtime_error(what + " (" + where + ")"), what_(std::move(what)), where_(std::move(where)) {}
    const std::string& problem() const { return what_; }
    const std::string& location() const { return where_; }

private:
    std::string what_;
    std::string where_;
};

}  // namespace allocscope::app
