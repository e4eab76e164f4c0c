#pragma once
// The table of allocscope-cli verbs. Each verb lives in its own file under verbs/ and adds
// itself with a static VerbRegistration, so a new verb never edits a shared list.
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace allocscope::cli {

// What a verb sees: its arguments (without the program and verb names) and where to write.
struct VerbContext {
    std::vector<std::string> args;
    std::ostream& out;
    std::ostream& err;
};

// Exit codes shared by every verb.
inline constexpr int kExitOk = 0;
inline constexpr int kExitBadInput = 1;  // "allocscope-cli: <what> (<where>)"
inline constexpr int kExitUsage = 2;

struct Verb {
    std::string name;
    std::string summary;  // one line for `allocscope-cli help`
    std::string usage;    // full usage text for `allocscope-cli help VERB`
    std::function<int(VerbContext&)> run;
};

class VerbRegistry {
public:
    static VerbRegistry& instance();
    void add(Verb verb);
    const Verb* find(std::string_view name) const;
    std::vector<const Verb*> sorted() const;

private:
    std::vector<Verb> verbs_;
};

struct VerbRegistration {
    explicit VerbRegistration(Verb verb) { VerbRegistry::instance().add(std::move(verb)); }
};

// Runs the CLI as main() would (argv[0] is the program name). Used by main and by tests.
int runCli(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);

}  // namespace allocscope::cli
