// `allocscope-cli export --db SESSION --run N (--pickle|--csv|--events-csv) OUT [--from E --to E]`:
// a recorded run (or a window of it) as a PyTorch snapshot pickle (state at the window's last
// event + its trace), an RMM CSV log, or one CSV line per event. Built from the session's rows.
#include <filesystem>
#include <fstream>
#include <ostream>

#include "app/cli/VerbRegistry.h"
#include "app/cli/verbs/db/DbVerbSupport.h"
#include "storage/formats/FormatError.h"
#include "storage/formats/PickleWriter.h"
#include "storage/formats/RmmCsvWriter.h"
#include "storage/session/SessionExport.h"
#include "storage/session/SessionReader.h"

namespace allocscope::cli {
namespace {

constexpr const char* kUsage =
    "usage: allocscope-cli export --db SESSION --run N (--pickle|--csv|--events-csv) OUT [--from E] [--to E]";

int usage(VerbContext& ctx, const std::string& problem) {
    ctx.err << "allocscope-cli: export: " << problem << "\n" << kUsage << "\n";
    return kExitUsage;
}

int runExport(VerbContext& ctx) {
    std::string db, out, format;
    std::uint64_t run = 0, from = 0, to = UINT64_MAX;
    bool haveRun = false;
    const auto& a = ctx.args;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const std::string& arg = a[i];
        auto value = [&](std::string& into) {
            if (i + 1 >= a.size()) return false;
            into = a[++i];
            return true;
        };
        std::string text;
        if (arg == "--db") {
            if (!value(db)) return usage(ctx, "--db needs a session file");
        } else if (arg == "--run" || arg == "--from" || arg == "--to") {
            std::uint64_t number = 0;
            if (!value(text) || !parseCount(text, number)) return usage(ctx, arg + " needs a number");
            if (arg == "--run") {
                run = number;
                haveRun = true;
            } else if (arg == "--from") {
                from = number;
            } else {
                to = number;
            }
        } else if (arg == "--pickle" || arg == "--csv" || arg == "--events-csv") {
            if (!format.empty()) return usage(ctx, "choose one of --pickle, --csv, --events-csv");
            format = arg;
            if (!value(out)) return usage(ctx, arg + " needs an output file");
        } else {
            return usage(ctx, "unexpected argument '" + arg + "'");
        }
    }
    if (db.empty()) return usage(ctx, "--db SESSION is required");
    if (!haveRun || run == 0 || run > 0x7fffffff) return usage(ctx, "--run N (from 1) is required");
    if (format.empty()) return usage(ctx, "one of --pickle, --csv, --events-csv OUT is required");
    if (from > to) return usage(ctx, "--from is after --to");
    std::error_code ec;
    if (std::filesystem::equivalent(db, out, ec)) {
        ctx.err << "allocscope-cli: the output would overwrite the session file (" << out << ")\n";
        return kExitBadInput;
    }
    try {
        storage::SessionReader reader(db);
        const int number = static_cast<int>(run);
        reader.run(number);
        if (format == "--pickle") {
            formats::PickleWriter::writeFile(storage::SessionExport::snapshot(reader, number, from, to), out);
            return kExitOk;
        }
        std::ofstream file(out, std::ios::binary | std::ios::trunc);
        if (!file) {
            ctx.err << "allocscope-cli: cannot write the output file (" << out << ")\n";
            return kExitBadInput;
        }
        if (format == "--csv") file << formats::RmmCsvWriter::write(storage::SessionExport::rmmLog(reader, number, from, to));
        else storage::SessionExport::eventsCsv(reader, number, from, to, file);
        file.close();
        if (!file) {
            ctx.err << "allocscope-cli: cannot write the output file (" << out << ")\n";
            return kExitBadInput;
        }
    } catch (const storage::SessionError& e) {
        return reportSessionError(ctx, e);
    } catch (const formats::FormatError& e) {
        ctx.err << "allocscope-cli: " << e.what() << "\n";
        return kExitBadInput;
    }
    return kExitOk;
}

const VerbRegistration kRegistration{Verb{
    "export", "export a recorded run as a snapshot pickle, RMM CSV or per-event CSV",
    std::string(kUsage) +
        "\n\nExports run N of SESSION (read-only). --pickle: a PyTorch memory snapshot (segments at the window's\n"
        "last event, the window's events as its trace); --csv: an RMM log (alloc / free / failure);\n"
        "--events-csv: one line per event with op index, cause and the timeline series.\n"
        "--from/--to: event indexes (inclusive) of the window; default the whole run.",
    runExport}};

}  // namespace
}  // namespace allocscope::cli
