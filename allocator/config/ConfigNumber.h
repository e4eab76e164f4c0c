#pragma once
// std::stoull and std::stod exactly as PyTorch's ConfigTokenizer calls them (libstdc++ on Linux),
// reported as values instead of exceptions, plus how much of the token was actually read (so we
// can warn about "128MB" being read as 128).
#include <cstddef>
#include <cstdint>
#include <string>

namespace allocscope::alloc {

struct ConfigNumber {
    enum class Status { Ok, Invalid, OutOfRange };
    Status status = Status::Invalid;
    std::uint64_t integer = 0;  // stoull result
    double real = 0.0;          // stod result
    std::size_t consumed = 0;   // characters read by strtoull/strtod
    bool negative = false;      // a leading '-' (stoull wraps it around)

    bool ok() const { return status == Status::Ok; }
    // Parses like std::stoull(text) (base 10): leading digits, trailing junk ignored, a leading
    // '-' negates modulo 2^64, no digits -> Invalid ("stoull"), overflow -> OutOfRange.
    static ConfigNumber stoull(const std::string& text);
    // Parses like std::stod(text) in the "C" numeric locale (Python never sets LC_NUMERIC, so
    // PyTorch always sees '.' as the decimal point): hex floats, inf and nan included;
    // underflow/overflow -> OutOfRange.
    static ConfigNumber stod(const std::string& text);
};

// Shortest text that std::stod reads back as exactly `value` ("0.6", "1e-05"), locale-free.
std::string formatConfigDouble(double value);

}  // namespace allocscope::alloc
