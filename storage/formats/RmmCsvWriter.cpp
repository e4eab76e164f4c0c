#include "storage/formats/RmmCsvWriter.h"

#include "storage/formats/FormatError.h"

namespace allocscope::formats {

std::string RmmCsvWriter::write(const RmmLog& log) {
    static const char* digits = "0123456789abcdef";
    std::string out = "Thread,Time,Action,Pointer,Size,Stream\n";
    for (size_t i = 0; i < log.records.size(); ++i) {
        const RmmRecord& r = log.records[i];
        if (r.time.find_first_of(",\r\n") != std::string::npos) {
            throw FormatError("Time contains a comma or line break and cannot be written as CSV",
                              "record " + std::to_string(i + 1));
        }
        out += std::to_string(r.thread);
        out += ',';
        out += r.time;
        out += ',';
        out += r.action == RmmAction::Allocate ? "allocate" : r.action == RmmAction::Free ? "free" : "allocate failure";
        out += ",0x";
        std::string hex;
        uint64_t p = r.pointer;
        do {
            hex.insert(hex.begin(), digits[p & 15]);
            p >>= 4;
        } while (p != 0);
        out += hex;
        out += ',';
        out += std::to_string(r.size);
        out += ',';
        out += std::to_string(r.stream);
        out += '\n';
    }
    return out;
}

}  // namespace allocscope::formats
