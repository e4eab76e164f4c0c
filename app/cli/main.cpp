// allocscope-cli: replay, record, compare and inspect without a GUI (a GPU server has no Qt).
#include <iostream>
#include <string>
#include <vector>

#include "app/cli/VerbRegistry.h"

int main(int argc, char** argv) {
    std::vector<std::string> args(argv, argv + argc);
    return allocscope::cli::runCli(args, std::cout, std::cerr);
}
