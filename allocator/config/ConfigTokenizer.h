#pragma once
// PyTorch's ConfigTokenizer (c10/core/AllocatorConfig.h), plus where each token came from.
//
// `,` `:` `[` `]` are one-character tokens; whitespace (std::isspace in the C locale) is dropped
// everywhere, even inside a token; every other run of characters is one token. `;` and `=` are
// therefore part of tokens ("max_split_size_mb = 128" is the single token
// "max_split_size_mb=128"). We keep each character's offset in the input so diagnostics can point
// at a character inside a token (the `=` or `;` that was meant as a separator).
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace allocscope::alloc {

struct ConfigToken {
    std::string text;                        // exactly PyTorch's token
    std::vector<std::size_t> sourceOffsets;  // input offset of each character of `text`
    std::size_t offset() const { return sourceOffsets.front(); }
    // Span in the input, from the first to the last character (dropped whitespace included).
    std::size_t length() const { return sourceOffsets.back() - sourceOffsets.front() + 1; }
    bool isPunct() const { return text.size() == 1 && (text == "," || text == ":" || text == "[" || text == "]"); }
};

class ConfigTokenizer {
public:
    static std::vector<ConfigToken> tokenize(std::string_view text);
    // The token texts alone: what PyTorch's parsers index into.
    static std::vector<std::string> texts(const std::vector<ConfigToken>& tokens);
};

}  // namespace allocscope::alloc
