#include "allocator/replay/AddressTies.h"

#include "allocator/core/FormatSize.h"
#include "allocator/core/HexAddress.h"

namespace allocscope::alloc {
namespace {

constexpr std::string_view kTiesPhrase = " best-fit ties between equal free blocks were broken by a modelled segment address";

}  // namespace

std::string AddressTies::describe() const {
    std::string text = std::to_string(modelled) + " of " + std::to_string(total) + std::string(kTiesPhrase);
    if (!firstModelled) return text + (total == 0 ? "" : " (every tie was broken by recorded addresses)");
    const AddressTie& first = *firstModelled;
    const BestFitTie& t = first.tie;
    auto segment = [](std::uint64_t base, bool guessed) {
        return "segment " + hexAddress(base) + (guessed ? ", modelled" : ", recorded");
    };
    return text + "; the first at op " + std::to_string(t.opIndex) + " (trace entry " + std::to_string(first.entryIndex) +
           "): a " + formatSize(t.requestSize) + " request took the " + formatSize(t.blockSize) + " block at " +
           hexAddress(t.chosen) + " (" + segment(t.chosenSegment, first.chosenModelled) + ") over " + hexAddress(t.other) + " (" +
           segment(t.otherSegment, first.otherModelled) + ")";
}

std::optional<std::pair<std::uint64_t, std::uint64_t>> AddressTies::countsIn(std::string_view text) {
    const std::size_t phrase = text.find(kTiesPhrase);
    if (phrase == std::string_view::npos) return std::nullopt;
    // "M of T" right before the phrase, at the start of a line (or of the text).
    std::size_t start = text.rfind('\n', phrase);
    start = start == std::string_view::npos ? 0 : start + 1;
    const std::string_view counts = text.substr(start, phrase - start);
    const std::size_t of = counts.find(" of ");
    if (of == std::string_view::npos) return std::nullopt;
    const auto number = [](std::string_view digits) -> std::optional<std::uint64_t> {
        if (digits.empty() || digits.size() > 19) return std::nullopt;
        std::uint64_t value = 0;
        for (const char c : digits) {
            if (c < '0' || c > '9') return std::nullopt;
            value = value * 10 + static_cast<std::uint64_t>(c - '0');
        }
        return value;
    };
    const std::optional<std::uint64_t> modelled = number(counts.substr(0, of));
    const std::optional<std::uint64_t> total = number(counts.substr(of + 4));
    if (!modelled || !total || *modelled > *total) return std::nullopt;
    return std::make_pair(*modelled, *total);
}

}  // namespace allocscope::alloc
