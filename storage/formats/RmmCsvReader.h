#pragma once
// Reads a RAPIDS RMM allocation log in CSV form:
//   Thread,Time,Action,Pointer,Size,Stream
// What is accepted (and said so in errors):
// - an optional UTF-8 BOM; LF or CRLF line ends; blank lines are skipped;
// - a header line is required; columns are found by name (case-insensitive, spaces trimmed), so
//   their order may differ and extra named columns are ignored; every data row must have exactly
//   as many fields as the header; no quoting (RMM never quotes);
// - Action: "allocate", "free", "allocate failure";
// - Pointer, Stream and Thread: hexadecimal with a 0x prefix or decimal; Size: decimal only;
//   all unsigned 64-bit (a minus sign or overflow is an error);
// - a line is at most kMaxLineLength bytes; NUL bytes, other control characters (except tab)
//   and invalid UTF-8 are errors.
// read() also runs RmmLogValidator (a free of an unknown pointer, a second allocate at a live
// address...), so an import never starts from an inconsistent log; parse() skips that.
// Every error is a FormatError located "line N" (1-based, the header is line 1).
#include <cstddef>
#include <string>
#include <string_view>

#include "storage/formats/RmmLog.h"

namespace allocscope::formats {

class RmmCsvReader {
public:
    static constexpr size_t kMaxLineLength = 64 * 1024;

    static RmmLog read(std::string_view text);
    static RmmLog readFile(const std::string& path);
    // Syntax only: no consistency checks between records.
    static RmmLog parse(std::string_view text);
};

}  // namespace allocscope::formats
