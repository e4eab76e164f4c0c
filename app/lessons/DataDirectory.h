#pragma once
// Where AllocScope's read-only data (the lessons and their traces) lives at run time, for the CLI
// and the GUI alike. In order:
//   1. an explicit override (an environment variable such as $ALLOCSCOPE_LESSONS_DIR), if set;
//   2. <dir of the running executable>/../share/allocscope/<what> — an installed package
//      (/usr/bin/allocscope -> /usr/share/allocscope/lessons), or a package unpacked anywhere;
//   3. <source tree>/resources/<what> — development builds run from build/, which have no share/
//      folder. Compiled out of packaged builds (-DALLOCSCOPE_SOURCE_RESOURCES=OFF), so an installed
//      binary never reads, or names, the tree it was built from.
// When none exists, the last candidate is returned, so an error names the place that was expected.
#include <string>

namespace allocscope::app {

class DataDirectory {
public:
    // The folder for `what` ("lessons") for this process; `overrideVariable` may be empty.
    static std::string locate(const std::string& what, const char* overrideVariable);
    // The same decision from explicit inputs, so tests can fake the executable and source tree.
    // `overrideValue`, `executable` and `sourceResources` may each be empty (= not available).
    static std::string locate(const std::string& what, const std::string& overrideValue,
                              const std::string& executable, const std::string& sourceResources);
    // The running executable's path, from /proc/self/exe (argv[0] may be relative or a symlink
    // name); empty when unavailable.
    static std::string executablePath();
    // The source tree's resources/ folder this binary was built from; empty when compiled out.
    static std::string sourceResources();
};

}  // namespace allocscope::app
