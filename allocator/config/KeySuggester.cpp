#include "allocator/config/KeySuggester.h"

#include <algorithm>
#include <cctype>
#include <limits>

namespace allocscope::alloc {
namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return out;
}

std::vector<std::string> words(std::string_view s) {
    std::vector<std::string> out;
    std::string cur;
    for (char ch : lower(s)) {
        if (ch == '_' || ch == '-' || ch == '.') {
            if (!cur.empty()) out.push_back(cur);
            cur.clear();
        } else {
            cur += ch;
        }
    }
    if (!cur.empty()) out.push_back(cur);
    return out;
}

bool isStopWord(const std::string& w) { return w == "mb" || w == "on" || w == "use"; }

std::size_t sharedWords(const std::vector<std::string>& a, const std::vector<std::string>& b) {
    std::size_t shared = 0;
    std::vector<bool> used(b.size(), false);
    for (const std::string& wa : a) {
        if (isStopWord(wa)) continue;
        for (std::size_t j = 0; j < b.size(); ++j) {
            if (used[j] || isStopWord(b[j])) continue;
            const std::size_t limit = std::min(wa.size(), b[j].size()) >= 5 ? 1 : 0;
            if (KeySuggester::editDistance(wa, b[j]) <= limit) {
                used[j] = true;
                ++shared;
                break;
            }
        }
    }
    return shared;
}

}  // namespace

std::size_t KeySuggester::editDistance(std::string_view a, std::string_view b) {
    // Three rolling rows (the adjacent-swap rule looks two rows back); keys are short.
    const std::size_t m = b.size();
    std::vector<std::size_t> prev2(m + 1), prev(m + 1), cur(m + 1);
    for (std::size_t j = 0; j <= m; ++j) prev[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (std::size_t j = 1; j <= m; ++j) {
            const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
                cur[j] = std::min(cur[j], prev2[j - 2] + 1);
            }
        }
        std::swap(prev2, prev);
        std::swap(prev, cur);
    }
    return prev[m];
}

std::string KeySuggester::nearest(std::string_view word, const std::vector<std::string_view>& candidates) {
    if (word.empty()) return {};
    const std::string lw = lower(word);
    const std::vector<std::string> ww = words(word);
    std::string_view best;
    std::size_t bestShared = 0;
    std::size_t bestDistance = std::numeric_limits<std::size_t>::max();
    for (std::string_view candidate : candidates) {
        const std::size_t shared = sharedWords(ww, words(candidate));
        const std::size_t distance = editDistance(lw, lower(candidate));
        const bool plausible = shared > 0 || distance <= std::max<std::size_t>(1, lw.size() / 3);
        if (!plausible) continue;
        if (best.empty() || shared > bestShared || (shared == bestShared && distance < bestDistance)) {
            best = candidate;
            bestShared = shared;
            bestDistance = distance;
        }
    }
    return std::string(best);
}

}  // namespace allocscope::alloc
