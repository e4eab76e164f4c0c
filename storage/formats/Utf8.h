#pragma once
// Strict UTF-8 validation shared by the pickle, JSON and CSV readers: overlong forms, surrogates
// (U+D800..U+DFFF) and code points past U+10FFFF are rejected, so every string we hand on is
// valid UTF-8 and a Qt view never has to guess.
#include <cstddef>
#include <string>
#include <string_view>

namespace allocscope::formats {

class Utf8 {
public:
    // Index of the first byte that starts an invalid sequence, or npos when `text` is valid.
    static size_t firstInvalid(std::string_view text);
    // Appends the UTF-8 encoding of a code point (<= U+10FFFF, not a surrogate).
    static void append(std::string& out, char32_t codePoint);
};

}  // namespace allocscope::formats
