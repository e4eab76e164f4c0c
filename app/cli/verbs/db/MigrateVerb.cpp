// `allocscope-cli migrate OLD NEW`: upgrades a session written by an older AllocScope into a new
// file at the current schema. OLD is only read (read-only, no sidecar appears beside it); NEW must
// not exist yet, and whatever a failed migration left of it is removed, so the user either gets
// an intact session at NEW or nothing there at all.
#include <filesystem>
#include <ostream>

#include "app/cli/VerbRegistry.h"
#include "app/cli/verbs/db/DbVerbSupport.h"
#include "storage/session/SchemaVersion.h"
#include "storage/session/SessionSchema.h"

namespace allocscope::cli {
namespace {

constexpr const char* kUsage = "usage: allocscope-cli migrate OLD NEW";

int usage(VerbContext& ctx, const std::string& problem) {
    ctx.err << "allocscope-cli: migrate: " << problem << "\n" << kUsage << "\n";
    return kExitUsage;
}

int runMigrate(VerbContext& ctx) {
    std::vector<std::string> paths;
    for (const std::string& arg : ctx.args) {
        if (arg == "--help" || arg == "-h") {
            ctx.out << VerbRegistry::instance().find("migrate")->usage << "\n";
            return kExitOk;
        }
        if (arg.size() > 1 && arg[0] == '-') return usage(ctx, "unknown option '" + arg + "'");
        paths.push_back(arg);
    }
    if (paths.size() != 2) {
        return usage(ctx, paths.size() < 2 ? "needs the old session and the new file's name"
                                           : "takes two files (got '" + paths[2] + "' too)");
    }
    const std::string& source = paths[0];
    const std::string& target = paths[1];

    // NEW is checked first: an existing file there is never touched, whatever OLD is.
    std::error_code ec;
    if (std::filesystem::exists(std::filesystem::symlink_status(target, ec))) {
        ctx.err << "allocscope-cli: the migration target already exists; migrate never overwrites, choose a new name ("
                << target << ")\n";
        return kExitBadInput;
    }
    const std::filesystem::path folder = std::filesystem::absolute(target, ec).parent_path();
    if (!std::filesystem::is_directory(folder, ec)) {
        ctx.err << "allocscope-cli: the folder of the migration target does not exist (" << target << ")\n";
        return kExitBadInput;
    }

    std::int64_t from = 0;
    try {
        from = storage::SessionSchema::storedVersion(source);
    } catch (const storage::SessionError& e) {
        return reportSessionError(ctx, e);
    }
    if (from == storage::kSchemaVersion) {
        ctx.err << "allocscope-cli: the session already has the current schema " << storage::kSchemaVersion
                << "; nothing to migrate, nothing written (" << source << ")\n";
        return kExitBadInput;
    }
    if (from > storage::kSchemaVersion) {
        ctx.err << "allocscope-cli: session written by a newer AllocScope (schema " << from << ", this build reads up to "
                << storage::kSchemaVersion << "); it cannot be migrated back (" << source << ")\n";
        return kExitBadInput;
    }

    std::size_t runCount = 0;
    try {
        runCount = storage::SessionSchema::migrateToCopy(source, target);  // leaves nothing at NEW on failure
    } catch (const std::exception& e) {
        const auto* session = dynamic_cast<const storage::SessionError*>(&e);
        ctx.err << "allocscope-cli: the migration into " << target << " failed, nothing was kept there: "
                << (session != nullptr ? session->problem() + " (" + session->where() + ")" : std::string(e.what()))
                << "\n";
        return kExitBadInput;
    }
    ctx.out << "migrated " << source << " from schema " << from << " to schema " << storage::kSchemaVersion << " into "
            << target << " (" << runCount << " run" << (runCount == 1 ? "" : "s") << ")\n";
    return kExitOk;
}

const VerbRegistration kRegistration{Verb{
    "migrate", "copy a session written by an older AllocScope into a new file at the current schema",
    std::string(kUsage) +
        "\n\nReads OLD (a session of an older schema; it is opened read-only and never written) and writes\n"
        "an upgraded copy to NEW, which must not exist yet. Prints the schemas and the number of runs.\n"
        "Exit 1 if NEW exists, if OLD already has the current schema (nothing is written), is newer than\n"
        "this build, or is not an intact session; a partly written NEW is removed.",
    runMigrate}};

}  // namespace
}  // namespace allocscope::cli
