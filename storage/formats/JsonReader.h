#pragma once
// A small strict JSON (RFC 8259) parser producing the same PyTree as the pickle reader, so a
// snapshot converted to JSON (what memory_viz also accepts) reads through the same
// SnapshotReader. Integers without fraction or exponent become ints in [-2^63, 2^64-1]; others
// become floats. Not accepted: comments, trailing commas, NaN/Infinity, lone surrogates, control
// characters in strings, invalid UTF-8, nesting deeper than kMaxDepth. A UTF-8 BOM is skipped.
// Errors are FormatError located "line L, column C" (1-based; column counts bytes).
// The parser is iterative: nesting costs heap, never C++ stack.
#include <cstddef>
#include <string_view>

#include "storage/formats/PyTree.h"

namespace allocscope::formats {

class JsonReader {
public:
    static constexpr size_t kMaxDepth = 10000;
    static PyTree read(std::string_view text);
};

}  // namespace allocscope::formats
