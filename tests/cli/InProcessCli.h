#pragma once
// Runs allocscope-cli's verb table in the test's own process (no child process, so sanitizers
// see the verbs' code) and returns what the command line would have shown. Shared by every
// suite that checks a verb's exit code and output.
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "app/cli/VerbRegistry.h"

namespace clitest {

struct CliResult {
    int code = -1;
    std::string out;
    std::string err;
};

// `args` without the program name: {"run", "fragmentation-101", "--seed", "2"}.
inline CliResult runInProcess(std::vector<std::string> args) {
    args.insert(args.begin(), "allocscope-cli");
    std::ostringstream out, err;
    CliResult r;
    r.code = allocscope::cli::runCli(args, out, err);
    r.out = out.str();
    r.err = err.str();
    return r;
}

}  // namespace clitest
