#include "allocator/config/ConfigNumber.h"

#include <cerrno>
#include <charconv>
#include <clocale>
#include <cstdlib>
#include <locale.h>

namespace allocscope::alloc {
namespace {

// A process-wide "C" locale object for strtod_l: the GUI calls setlocale(LC_ALL, "") through
// Qt, and plain strtod would then read "0.5" as 0 in a locale whose decimal point is ','.
locale_t cNumericLocale() {
    static const locale_t loc = newlocale(LC_NUMERIC_MASK, "C", static_cast<locale_t>(nullptr));
    return loc;
}

}  // namespace

ConfigNumber ConfigNumber::stoull(const std::string& text) {
    ConfigNumber n;
    const char* begin = text.c_str();
    char* end = nullptr;
    const int savedErrno = errno;
    errno = 0;
    const unsigned long long value = std::strtoull(begin, &end, 10);
    n.consumed = static_cast<std::size_t>(end - begin);
    if (end == begin) {
        n.status = Status::Invalid;
    } else if (errno == ERANGE) {
        n.status = Status::OutOfRange;
    } else {
        n.status = Status::Ok;
        n.integer = value;
        // strtoull skips no whitespace here (tokens have none), so the sign is the first char.
        n.negative = text[0] == '-';
    }
    errno = savedErrno;
    return n;
}

ConfigNumber ConfigNumber::stod(const std::string& text) {
    ConfigNumber n;
    const char* begin = text.c_str();
    char* end = nullptr;
    const int savedErrno = errno;
    errno = 0;
    const double value = strtod_l(begin, &end, cNumericLocale());
    n.consumed = static_cast<std::size_t>(end - begin);
    if (end == begin) {
        n.status = Status::Invalid;
    } else if (errno == ERANGE) {
        n.status = Status::OutOfRange;  // libstdc++'s std::stod throws out_of_range("stod")
    } else {
        n.status = Status::Ok;
        n.real = value;
        n.negative = text[0] == '-';
    }
    errno = savedErrno;
    return n;
}

std::string formatConfigDouble(double value) {
    char buffer[64];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
    return std::string(buffer, result.ptr);
}

}  // namespace allocscope::alloc
