#include "storage/formats/RmmLogValidator.h"

#include <map>
#include <string>

#include "storage/formats/FormatError.h"

namespace allocscope::formats {
namespace {

std::string hex(uint64_t v) {
    static const char* digits = "0123456789abcdef";
    std::string s;
    do {
        s.insert(s.begin(), digits[v & 15]);
        v >>= 4;
    } while (v != 0);
    return "0x" + s;
}

struct Live {
    uint64_t size;
    uint64_t line;
};

}  // namespace

void RmmLogValidator::check(const RmmLog& log) {
    // Live allocations by address; ordered so an overlapping allocate is found in O(log n).
    std::map<uint64_t, Live> live;
    for (const RmmRecord& r : log.records) {
        const std::string where = "line " + std::to_string(r.line);
        switch (r.action) {
        case RmmAction::AllocateFailure:
            break;
        case RmmAction::Allocate: {
            if (r.pointer == 0) throw FormatError("allocate returned the null pointer", where);
            if (r.size > UINT64_MAX - r.pointer) {
                throw FormatError("allocate at " + hex(r.pointer) + " of " + std::to_string(r.size) +
                                      " bytes runs past the end of the address space", where);
            }
            auto next = live.lower_bound(r.pointer);
            if (next != live.end() && next->first == r.pointer) {
                throw FormatError("second allocate at live address " + hex(r.pointer) + " (allocated at line " +
                                      std::to_string(next->second.line) + " and not freed)", where);
            }
            if (next != live.end() && r.size > 0 && next->first < r.pointer + r.size) {
                throw FormatError("allocate at " + hex(r.pointer) + " of " + std::to_string(r.size) +
                                      " bytes overlaps the live allocation at " + hex(next->first) +
                                      " (line " + std::to_string(next->second.line) + ")", where);
            }
            if (next != live.begin()) {
                const auto prev = std::prev(next);
                if (prev->first + prev->second.size > r.pointer) {
                    throw FormatError("allocate at " + hex(r.pointer) + " lies inside the live allocation at " +
                                          hex(prev->first) + " (line " + std::to_string(prev->second.line) + ")",
                                      where);
                }
            }
            live.emplace(r.pointer, Live{r.size, r.line});
            break;
        }
        case RmmAction::Free: {
            const auto it = live.find(r.pointer);
            if (it == live.end()) {
                throw FormatError("free of unknown pointer " + hex(r.pointer) +
                                      " (never allocated in this log, or already freed)", where);
            }
            if (it->second.size != r.size) {
                throw FormatError("free of " + hex(r.pointer) + " with size " + std::to_string(r.size) +
                                      ", but it was allocated with size " + std::to_string(it->second.size) +
                                      " at line " + std::to_string(it->second.line), where);
            }
            live.erase(it);
            break;
        }
        }
    }
}

}  // namespace allocscope::formats
