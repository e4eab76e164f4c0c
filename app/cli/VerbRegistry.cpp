#include "app/cli/VerbRegistry.h"

#include <algorithm>
#include <ostream>

namespace allocscope::cli {

VerbRegistry& VerbRegistry::instance() {
    static VerbRegistry registry;
    return registry;
}

void VerbRegistry::add(Verb verb) { verbs_.push_back(std::move(verb)); }

const Verb* VerbRegistry::find(std::string_view name) const {
    for (const Verb& verb : verbs_) {
        if (verb.name == name) return &verb;
    }
    return nullptr;
}

std::vector<const Verb*> VerbRegistry::sorted() const {
    std::vector<const Verb*> out;
    for (const Verb& verb : verbs_) out.push_back(&verb);
    std::sort(out.begin(), out.end(), [](const Verb* a, const Verb* b) { return a->name < b->name; });
    return out;
}

namespace {
void printHelp(std::ostream& out) {
    out << "allocscope-cli: the PyTorch CUDA caching allocator, headless\n\n"
           "usage: allocscope-cli VERB [ARGS...]\n       allocscope-cli help VERB\n\nverbs:\n";
    for (const Verb* verb : VerbRegistry::instance().sorted()) {
        out << "  " << verb->name << std::string(verb->name.size() < 12 ? 12 - verb->name.size() : 1, ' ')
            << verb->summary << "\n";
    }
}
}  // namespace

int runCli(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
    if (argv.size() < 2 || argv[1] == "--help" || argv[1] == "-h" ||
        (argv[1] == "help" && argv.size() == 2)) {
        printHelp(argv.size() < 2 ? err : out);
        return argv.size() < 2 ? kExitUsage : kExitOk;
    }
    if (argv[1] == "--version") {
        out << "allocscope-cli 0.1.0\n";
        return kExitOk;
    }
    if (argv[1] == "help") {
        const Verb* verb = VerbRegistry::instance().find(argv[2]);
        if (verb == nullptr) {
            err << "allocscope-cli: unknown verb '" << argv[2] << "' (try: allocscope-cli help)\n";
            return kExitUsage;
        }
        out << verb->usage << "\n";
        return kExitOk;
    }
    const Verb* verb = VerbRegistry::instance().find(argv[1]);
    if (verb == nullptr) {
        err << "allocscope-cli: unknown verb '" << argv[1] << "' (try: allocscope-cli help)\n";
        return kExitUsage;
    }
    VerbContext context{std::vector<std::string>(argv.begin() + 2, argv.end()), out, err};
    return verb->run(context);
}

}  // namespace allocscope::cli
