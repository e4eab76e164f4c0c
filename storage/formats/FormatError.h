#pragma once
// The one error every reader raises for bad input: what is wrong and where (byte offset or
// line), so a message can say "allocscope-cli: <what> (<where>)".
#include <cstdint>
#include <stdexcept>
#include <string>

namespace allocscope::formats {

class FormatError : public std::runtime_error {
public:
    // `where` is human-readable: "byte 1234", "line 17, column 3", "key 'segments'".
    FormatError(std::string what, std::string where)
        : std::runtime_error(what + " (" + where + ")"), what_(std::move(what)), where_(std::move(where)) {}
    const std::string& problem() const { return what_; }
    const std::string& location() const { return where_; }

    // `location` as a place inside `file` ("file: byte 12"), or just "file" where the reader
    // already named the file itself as the place (it could not open or read it): named once.
    static std::string inFile(const std::string& file, const std::string& location) {
        return location.empty() || location == file ? file : file + ": " + location;
    }

private:
    std::string what_;
    std::string where_;
};

}  // namespace allocscope::formats
