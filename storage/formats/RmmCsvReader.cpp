#include "storage/formats/RmmCsvReader.h"

#include <array>
#include <cstring>
#include <vector>

#include "storage/formats/FileBytes.h"
#include "storage/formats/FormatError.h"
#include "storage/formats/RmmLogValidator.h"
#include "storage/formats/Utf8.h"

namespace allocscope::formats {
namespace {

constexpr std::array<const char*, 6> kColumns{"Thread", "Time", "Action", "Pointer", "Size", "Stream"};
constexpr const char* kHeader = "Thread,Time,Action,Pointer,Size,Stream";

[[noreturn]] void fail(const std::string& what, uint64_t line) {
    throw FormatError(what, "line " + std::to_string(line));
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

std::vector<std::string_view> split(std::string_view line) {
    std::vector<std::string_view> fields;
    size_t start = 0;
    while (true) {
        const size_t comma = line.find(',', start);
        if (comma == std::string_view::npos) {
            fields.push_back(trim(line.substr(start)));
            return fields;
        }
        fields.push_back(trim(line.substr(start, comma - start)));
        start = comma + 1;
    }
}

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
        if (x != y) return false;
    }
    return true;
}

std::string shown(std::string_view field) {
    constexpr size_t kShow = 40;
    // Built with append(): GCC 12 at -O3 reports a false -Wrestrict on chained operator+.
    std::string out;
    out.reserve(kShow + 5);
    out.push_back('\'');
    out.append(field.substr(0, kShow));
    out.append(field.size() > kShow ? "...'" : "'");
    return out;
}

uint64_t number(std::string_view field, bool allowHex, const char* column, uint64_t line) {
    if (field.empty()) fail(std::string("empty ") + column, line);
    if (field.front() == '-') fail(std::string("negative ") + column + " " + shown(field), line);
    unsigned base = 10;
    std::string_view digits = field;
    if (field.size() > 2 && field[0] == '0' && (field[1] == 'x' || field[1] == 'X')) {
        if (!allowHex) fail(std::string(column) + " must be decimal, found " + shown(field), line);
        base = 16;
        digits.remove_prefix(2);
    }
    uint64_t value = 0;
    for (char c : digits) {
        unsigned d = 0;
        if (c >= '0' && c <= '9') d = static_cast<unsigned>(c - '0');
        else if (base == 16 && c >= 'a' && c <= 'f') d = static_cast<unsigned>(c - 'a' + 10);
        else if (base == 16 && c >= 'A' && c <= 'F') d = static_cast<unsigned>(c - 'A' + 10);
        else {
            fail(std::string("invalid ") + column + " " + shown(field) +
                     (allowHex ? " (expected decimal or 0x-hexadecimal)" : " (expected a decimal number)"),
                 line);
        }
        if (value > (UINT64_MAX - d) / base) fail(std::string(column) + " " + shown(field) + " does not fit in 64 bits", line);
        value = value * base + d;
    }
    return value;
}

}  // namespace

RmmLog RmmCsvReader::parse(std::string_view text) {
    RmmLog log;
    if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
    std::array<size_t, 6> index{};
    size_t columns = 0;
    bool haveHeader = false;
    uint64_t lineNo = 0;
    size_t pos = 0;
    while (pos < text.size()) {
        ++lineNo;
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(pos, end - pos);
        pos = end + 1;
        if (line.size() > kMaxLineLength) {
            fail("line is " + std::to_string(line.size()) + " bytes long; a record has at most " +
                     std::to_string(kMaxLineLength),
                 lineNo);
        }
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (const void* nul = std::memchr(line.data(), '\0', line.size())) {
            fail("NUL byte at column " + std::to_string(static_cast<const char*>(nul) - line.data() + 1) +
                     " (binary data, not a CSV log)",
                 lineNo);
        }
        for (size_t i = 0; i < line.size(); ++i) {
            const auto c = static_cast<unsigned char>(line[i]);
            if (c < 0x20 && c != '\t') {
                fail("control character " + std::to_string(c) + " at column " + std::to_string(i + 1), lineNo);
            }
        }
        if (const size_t bad = Utf8::firstInvalid(line); bad != std::string_view::npos) {
            fail("invalid UTF-8 at column " + std::to_string(bad + 1), lineNo);
        }
        if (line.find('"') != std::string_view::npos) fail("quoted fields are not supported (RMM logs never quote)", lineNo);
        if (trim(line).empty()) continue;
        const std::vector<std::string_view> fields = split(line);

        if (!haveHeader) {
            index.fill(SIZE_MAX);
            for (size_t f = 0; f < fields.size(); ++f) {
                for (size_t c = 0; c < kColumns.size(); ++c) {
                    if (!equalsIgnoreCase(fields[f], kColumns[c])) continue;
                    if (index[c] != SIZE_MAX) fail(std::string("column '") + kColumns[c] + "' appears twice in the header", lineNo);
                    index[c] = f;
                }
            }
            for (size_t c = 0; c < kColumns.size(); ++c) {
                if (index[c] == SIZE_MAX) {
                    fail(std::string("missing header: the first line must name the columns ") + kHeader + " (no '" +
                             kColumns[c] + "' in " + shown(line) + ")",
                         lineNo);
                }
            }
            columns = fields.size();
            haveHeader = true;
            continue;
        }
        if (fields.size() != columns) {
            fail(std::to_string(fields.size()) + " fields, but the header has " + std::to_string(columns), lineNo);
        }
        RmmRecord r;
        r.line = lineNo;
        r.thread = number(fields[index[0]], true, "Thread", lineNo);
        r.time = std::string(fields[index[1]]);
        const std::string_view action = fields[index[2]];
        if (equalsIgnoreCase(action, "allocate")) r.action = RmmAction::Allocate;
        else if (equalsIgnoreCase(action, "free")) r.action = RmmAction::Free;
        else if (equalsIgnoreCase(action, "allocate failure")) r.action = RmmAction::AllocateFailure;
        else fail("unknown Action " + shown(action) + " (expected allocate, free or allocate failure)", lineNo);
        r.pointer = number(fields[index[3]], true, "Pointer", lineNo);
        r.size = number(fields[index[4]], false, "Size", lineNo);
        r.stream = number(fields[index[5]], true, "Stream", lineNo);
        log.records.push_back(std::move(r));
    }
    if (!haveHeader) fail(std::string("empty file: no header line ") + kHeader, lineNo == 0 ? 1 : lineNo);
    return log;
}

RmmLog RmmCsvReader::read(std::string_view text) {
    RmmLog log = parse(text);
    RmmLogValidator::check(log);
    return log;
}

RmmLog RmmCsvReader::readFile(const std::string& path) { return read(FileBytes::read(path)); }

}  // namespace allocscope::formats
