#include "storage/import/RankRule.h"

#include <cctype>

namespace allocscope::storage {
namespace {

constexpr std::size_t kMaxDigits = 9;  // fits int

bool isLetter(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }
char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

// The digits starting at `at` (at most kMaxDigits, not followed by another digit): their value.
std::optional<int> digitsAt(std::string_view text, std::size_t at, std::size_t* end = nullptr) {
    std::size_t i = at;
    int value = 0;
    while (i < text.size() && isDigit(text[i])) {
        if (i - at == kMaxDigits) return std::nullopt;
        value = value * 10 + (text[i] - '0');
        ++i;
    }
    if (i == at) return std::nullopt;
    if (end != nullptr) *end = i;
    return value;
}

// Positions where the word `rank` starts (any case) without a letter right before it.
template <typename Fn>
std::optional<int> eachRankWord(std::string_view text, Fn&& after) {
    for (std::size_t i = 0; i + 4 <= text.size(); ++i) {
        if (lower(text[i]) != 'r' || lower(text[i + 1]) != 'a' || lower(text[i + 2]) != 'n' || lower(text[i + 3]) != 'k') continue;
        if (i > 0 && isLetter(text[i - 1])) continue;
        if (const std::optional<int> rank = after(i + 4)) return rank;
    }
    return std::nullopt;
}

bool isNameSeparator(char c) { return c == '_' || c == '-' || c == '.'; }

}  // namespace

std::optional<int> RankRule::fromFileName(std::string_view path) {
    const std::size_t slash = path.find_last_of("/\\");
    const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
    const std::optional<int> word = eachRankWord(name, [name](std::size_t at) {
        if (at < name.size() && isNameSeparator(name[at])) ++at;
        return digitsAt(name, at);
    });
    if (word) return word;
    for (std::size_t i = 0; i < name.size(); ++i) {
        if (lower(name[i]) != 'r' || (i > 0 && !isNameSeparator(name[i - 1]))) continue;
        std::size_t end = 0;
        const std::optional<int> rank = digitsAt(name, i + 1, &end);
        if (rank && (end == name.size() || isNameSeparator(name[end]))) return rank;
    }
    return std::nullopt;
}

std::optional<int> RankRule::fromMetadata(std::string_view metadata) {
    return eachRankWord(metadata, [metadata](std::size_t at) {
        for (int skipped = 0; skipped < 4 && at < metadata.size(); ++skipped, ++at) {
            const char c = metadata[at];
            if (c != ' ' && c != '"' && c != '\'' && c != '_' && c != '-' && c != ':' && c != '=') break;
        }
        return digitsAt(metadata, at);
    });
}

std::optional<FoundRank> RankRule::find(std::string_view path, const std::vector<std::string>& metadata) {
    for (const std::string& text : metadata) {
        if (const std::optional<int> rank = fromMetadata(text)) return FoundRank{*rank, true};
    }
    if (const std::optional<int> rank = fromFileName(path)) return FoundRank{*rank, false};
    return std::nullopt;
}

}  // namespace allocscope::storage
