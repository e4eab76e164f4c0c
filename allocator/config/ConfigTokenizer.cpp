#include "allocator/config/ConfigTokenizer.h"

namespace allocscope::alloc {
namespace {

// std::isspace in the "C" locale, which is what PyTorch's tokenizer sees: Python never changes
// LC_CTYPE's classification of these bytes, and bytes >= 0x80 are never spaces there. Written
// out so a Qt process that called setlocale() cannot change our answer.
bool isCSpace(char ch) {
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\v' || ch == '\f' || ch == '\r';
}

}  // namespace

std::vector<ConfigToken> ConfigTokenizer::tokenize(std::string_view text) {
    std::vector<ConfigToken> tokens;
    ConfigToken buffer;
    auto flush = [&] {
        if (!buffer.text.empty()) {
            tokens.push_back(std::move(buffer));
            buffer = ConfigToken{};
        }
    };
    for (std::size_t pos = 0; pos < text.size(); ++pos) {
        const char ch = text[pos];
        if (ch == ',' || ch == ':' || ch == '[' || ch == ']') {
            flush();
            tokens.push_back(ConfigToken{std::string(1, ch), {pos}});
        } else if (!isCSpace(ch)) {
            buffer.text += ch;
            buffer.sourceOffsets.push_back(pos);
        }
    }
    flush();
    return tokens;
}

std::vector<std::string> ConfigTokenizer::texts(const std::vector<ConfigToken>& tokens) {
    std::vector<std::string> out;
    out.reserve(tokens.size());
    for (const ConfigToken& token : tokens) out.push_back(token.text);
    return out;
}

}  // namespace allocscope::alloc
