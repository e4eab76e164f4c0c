#pragma once
// Writes an RmmLog as RMM's CSV: the header, then one line per record with Thread and Size in
// decimal, Pointer as lowercase 0x-hex, Stream in decimal (the layout of the shared traces'
// CSVs, so reading and writing one of them gives back the same bytes).
#include <string>

#include "storage/formats/RmmLog.h"

namespace allocscope::formats {

class RmmCsvWriter {
public:
    // Throws FormatError when a record cannot be written as CSV (a Time with a comma or line end).
    static std::string write(const RmmLog& log);
};

}  // namespace allocscope::formats
