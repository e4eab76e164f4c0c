#pragma once
// Reads a whole input file into memory for the format readers. Input files are only ever opened
// for reading; a file that cannot be read is a FormatError naming the path and the OS's reason.
#include <string>

namespace allocscope::formats {

class FileBytes {
public:
    static std::string read(const std::string& path);
};

}  // namespace allocscope::formats
