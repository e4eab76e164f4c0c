#include "storage/formats/JsonReader.h"

#include <charconv>
#include <string>
#include <vector>

#include "storage/formats/FormatError.h"
#include "storage/formats/Utf8.h"

namespace allocscope::formats {
namespace {

class Parser {
public:
    explicit Parser(std::string_view text) : s_(text) {}

    PyTree run();

private:
    enum class State { Value, ArrayFirst, ObjectFirst, Key, After };
    struct Open {
        PyRef ref;
        bool object;
        size_t from;  // where its items start in pending_
    };

    [[noreturn]] void fail(const std::string& what, size_t at) const {
        size_t line = 1, column = 1;
        for (size_t i = 0; i < at && i < s_.size(); ++i) {
            if (s_[i] == '\n') {
                ++line;
                column = 1;
            } else {
                ++column;
            }
        }
        throw FormatError(what, "line " + std::to_string(line) + ", column " + std::to_string(column));
    }
    void skipWs() {
        while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
    }
    bool atEnd() const { return pos_ >= s_.size(); }
    char peek() const { return s_[pos_]; }

    std::string parseString();
    unsigned hex4(size_t at);
    PyRef parseNumber();
    void attach(PyRef value);
    void open(bool object);
    void close();

    std::string_view s_;
    size_t pos_ = 0;
    PyTree tree_;
    std::vector<Open> stack_;
    // Items of the open containers, innermost last: a container gets its items in one append when
    // it closes, which keeps them in the tree's flat array (see PyTree::append).
    std::vector<PyRef> pending_;
    bool haveRoot_ = false;
};

unsigned Parser::hex4(size_t at) {
    if (s_.size() - at < 4) fail("truncated \\u escape", at);
    unsigned v = 0;
    for (size_t i = 0; i < 4; ++i) {
        const char c = s_[at + i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= static_cast<unsigned>(c - '0');
        else if (c >= 'a' && c <= 'f') v |= static_cast<unsigned>(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= static_cast<unsigned>(c - 'A' + 10);
        else fail("invalid hex digit in \\u escape", at + i);
    }
    return v;
}

std::string Parser::parseString() {
    const size_t start = pos_;
    ++pos_;  // opening quote
    std::string out;
    size_t runStart = pos_;
    while (true) {
        if (atEnd()) fail("unterminated string", start);
        const unsigned char c = static_cast<unsigned char>(s_[pos_]);
        if (c == '"') {
            out.append(s_.data() + runStart, pos_ - runStart);
            ++pos_;
            break;
        }
        if (c < 0x20) fail("control character in string (escape it)", pos_);
        if (c != '\\') {
            ++pos_;
            continue;
        }
        out.append(s_.data() + runStart, pos_ - runStart);
        const size_t escAt = pos_;
        if (s_.size() - pos_ < 2) fail("unterminated string", start);
        const char e = s_[pos_ + 1];
        pos_ += 2;
        switch (e) {
        case '"': out.push_back('"'); break;
        case '\\': out.push_back('\\'); break;
        case '/': out.push_back('/'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 't': out.push_back('\t'); break;
        case 'u': {
            char32_t cp = hex4(pos_);
            pos_ += 4;
            if (cp >= 0xDC00 && cp <= 0xDFFF) fail("lone low surrogate in \\u escape", escAt);
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                if (s_.size() - pos_ < 6 || s_[pos_] != '\\' || s_[pos_ + 1] != 'u') {
                    fail("high surrogate not followed by a low surrogate", escAt);
                }
                const char32_t lo = hex4(pos_ + 2);
                if (lo < 0xDC00 || lo > 0xDFFF) fail("high surrogate not followed by a low surrogate", escAt);
                pos_ += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            Utf8::append(out, cp);
            break;
        }
        default: fail(std::string("invalid escape \\") + e, escAt);
        }
        runStart = pos_;
    }
    const size_t bad = Utf8::firstInvalid(s_.substr(start + 1, pos_ - start - 2));
    if (bad != std::string_view::npos) fail("invalid UTF-8 in string", start + 1 + bad);
    return out;
}

PyRef Parser::parseNumber() {
    const size_t start = pos_;
    bool negative = false;
    if (s_[pos_] == '-') {
        negative = true;
        ++pos_;
    }
    auto digits = [&] {
        const size_t d = pos_;
        while (!atEnd() && peek() >= '0' && peek() <= '9') ++pos_;
        return pos_ - d;
    };
    const size_t intStart = pos_;
    const size_t intDigits = digits();
    if (intDigits == 0) fail("invalid number", start);
    if (intDigits > 1 && s_[intStart] == '0') fail("leading zero in number", start);
    bool isFloat = false;
    if (!atEnd() && peek() == '.') {
        ++pos_;
        if (digits() == 0) fail("digits expected after '.'", pos_);
        isFloat = true;
    }
    if (!atEnd() && (peek() == 'e' || peek() == 'E')) {
        ++pos_;
        if (!atEnd() && (peek() == '+' || peek() == '-')) ++pos_;
        if (digits() == 0) fail("digits expected in exponent", pos_);
        isFloat = true;
    }
    if (isFloat) {
        double v = 0;
        const auto r = std::from_chars(s_.data() + start, s_.data() + pos_, v);
        if (r.ec != std::errc() || r.ptr != s_.data() + pos_) fail("number out of range", start);
        return tree_.addFloat(v, start);
    }
    uint64_t magnitude = 0;
    const auto r = std::from_chars(s_.data() + intStart, s_.data() + pos_, magnitude);
    if (r.ec != std::errc()) fail("integer does not fit in 64 bits", start);
    if (negative) {
        if (magnitude > (uint64_t(1) << 63)) fail("integer below -2^63", start);
        if (magnitude == 0) return tree_.addInt(0, false, start);
        return tree_.addInt(~magnitude + 1, true, start);
    }
    return tree_.addInt(magnitude, false, start);
}

void Parser::attach(PyRef value) {
    if (stack_.empty()) {
        tree_.root = value;
        haveRoot_ = true;
    } else {
        pending_.push_back(value);
    }
}

void Parser::close() {
    const size_t from = stack_.back().from;
    tree_.append(stack_.back().ref, PyItems(pending_.data() + from, pending_.size() - from));
    pending_.resize(from);
    stack_.pop_back();
}

void Parser::open(bool object) {
    if (stack_.size() >= JsonReader::kMaxDepth) {
        fail("nesting deeper than " + std::to_string(JsonReader::kMaxDepth) + " levels", pos_);
    }
    const PyRef ref = tree_.addContainer(object ? PyKind::Dict : PyKind::List, pos_);
    attach(ref);
    stack_.push_back(Open{ref, object, pending_.size()});
    ++pos_;
}

PyTree Parser::run() {
    if (s_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;
    State state = State::Value;
    while (true) {
        skipWs();
        if (state == State::After && stack_.empty()) {
            if (!atEnd()) fail("unexpected data after the JSON value", pos_);
            return std::move(tree_);
        }
        if (atEnd()) fail(haveRoot_ ? "unexpected end of input (unclosed array or object)" : "empty input: no JSON value", pos_);
        const char c = peek();
        switch (state) {
        case State::ArrayFirst:
            if (c == ']') {
                ++pos_;
                close();
                state = State::After;
                continue;
            }
            state = State::Value;
            [[fallthrough]];
        case State::Value:
            if (c == '{') {
                open(true);
                state = State::ObjectFirst;
            } else if (c == '[') {
                open(false);
                state = State::ArrayFirst;
            } else {
                const size_t at = pos_;
                PyRef v = 0;
                if (c == '"') {
                    v = tree_.addStr(parseString(), at);
                } else if (c == '-' || (c >= '0' && c <= '9')) {
                    v = parseNumber();
                } else if (s_.substr(pos_, 4) == "true") {
                    pos_ += 4;
                    v = tree_.addBool(true, at);
                } else if (s_.substr(pos_, 5) == "false") {
                    pos_ += 5;
                    v = tree_.addBool(false, at);
                } else if (s_.substr(pos_, 4) == "null") {
                    pos_ += 4;
                    v = tree_.addNone(at);
                } else {
                    fail(std::string("expected a JSON value, found '") + c + "'", pos_);
                }
                attach(v);
                state = State::After;
            }
            break;
        case State::ObjectFirst:
            if (c == '}') {
                ++pos_;
                close();
                state = State::After;
                continue;
            }
            state = State::Key;
            [[fallthrough]];
        case State::Key: {
            if (c != '"') fail("expected a string key", pos_);
            const size_t at = pos_;
            pending_.push_back(tree_.addStr(parseString(), at));
            skipWs();
            if (atEnd() || peek() != ':') fail("expected ':' after key", pos_);
            ++pos_;
            state = State::Value;
            break;
        }
        case State::After: {
            const bool object = stack_.back().object;
            if (c == ',') {
                ++pos_;
                state = object ? State::Key : State::Value;
            } else if (c == (object ? '}' : ']')) {
                ++pos_;
                close();
            } else {
                fail(object ? "expected ',' or '}'" : "expected ',' or ']'", pos_);
            }
            break;
        }
        }
    }
}

}  // namespace

PyTree JsonReader::read(std::string_view text) {
    Parser parser(text);
    return parser.run();
}

}  // namespace allocscope::formats
