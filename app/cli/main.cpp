// allocscope-cli: replay, record, compare and inspect without a GUI (a GPU server has no Qt).
#include <csignal>
#include <iostream>
#include <string>
#include <vector>

#include "app/cli/VerbRegistry.h"

int main(int argc, char** argv) {
    // Output piped into `head` must not kill the process half-way (SIGPIPE's default): a verb
    // that imported a trace into a temporary session still removes it, and a session being
    // recorded is closed cleanly. Writes after the reader has gone simply fail.
    std::signal(SIGPIPE, SIG_IGN);
    std::vector<std::string> args(argv, argv + argc);
    return allocscope::cli::runCli(args, std::cout, std::cerr);
}
