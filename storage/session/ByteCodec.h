#pragma once
// LEB128 varints and zigzag: the compact integer encoding of every BLOB in a session file
// (event chunks, keyframes, samples). A reader that runs past the end throws SessionError: a
// damaged BLOB is bad input, never a crash.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace allocscope::storage {

// The most bytes a 64-bit varint takes.
inline constexpr std::size_t kMaxVarintBytes = 10;

// Zigzag: a signed value as an unsigned one whose size follows the magnitude (0, -1, 1, -2 ...).
inline std::uint64_t zigzag(std::int64_t value) {
    return (static_cast<std::uint64_t>(value) << 1) ^ static_cast<std::uint64_t>(value >> 63);
}

// Writes `value` as a LEB128 varint at `p` (at most kMaxVarintBytes) and returns the byte after
// it. Through a pointer: the recorder's writer encodes every event of a big import this way
// (EventCodec), where a string's push_back per byte cost twice as much.
inline std::uint8_t* putVarint(std::uint8_t* p, std::uint64_t value) {
    while (value >= 0x80) {
        *p++ = static_cast<std::uint8_t>((value & 0x7f) | 0x80);
        value >>= 7;
    }
    *p++ = static_cast<std::uint8_t>(value);
    return p;
}
inline std::uint8_t* putSvarint(std::uint8_t* p, std::int64_t value) { return putVarint(p, zigzag(value)); }

class ByteWriter {
public:
    void varint(std::uint64_t value) {
        std::uint8_t buffer[kMaxVarintBytes];
        const std::uint8_t* end = putVarint(buffer, value);
        bytes_.append(reinterpret_cast<const char*>(buffer), static_cast<std::size_t>(end - buffer));
    }
    void svarint(std::int64_t value) { varint(zigzag(value)); }
    void byte(std::uint8_t value) { bytes_.push_back(static_cast<char>(value)); }
    void text(std::string_view value) {
        varint(value.size());
        bytes_.append(value);
    }
    std::string& bytes() { return bytes_; }
    void clear() { bytes_.clear(); }

private:
    std::string bytes_;
};

class ByteReader {
public:
    ByteReader(std::string_view bytes, const char* what) : p_(bytes.data()), end_(bytes.data() + bytes.size()), what_(what) {}
    std::uint64_t varint() {
        std::uint64_t value = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (p_ == end_) damaged();
            const auto b = static_cast<std::uint8_t>(*p_++);
            value |= static_cast<std::uint64_t>(b & 0x7f) << shift;
            if ((b & 0x80) == 0) return value;
        }
        damaged();
    }
    std::int64_t svarint() {
        const std::uint64_t v = varint();
        return static_cast<std::int64_t>((v >> 1) ^ (~(v & 1) + 1));
    }
    std::uint8_t byte() {
        if (p_ == end_) damaged();
        return static_cast<std::uint8_t>(*p_++);
    }
    std::string text() {
        const std::uint64_t n = varint();
        if (n > static_cast<std::uint64_t>(end_ - p_)) damaged();
        std::string out(p_, static_cast<std::size_t>(n));
        p_ += n;
        return out;
    }
    bool atEnd() const { return p_ == end_; }
    [[noreturn]] void damaged() const;

private:
    const char* p_;
    const char* end_;
    const char* what_;
};

}  // namespace allocscope::storage
