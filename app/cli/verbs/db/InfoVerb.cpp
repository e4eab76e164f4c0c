// `allocscope-cli info SESSION [--json]`: what a session file holds (its runs, their sources,
// configs, status and summaries). Opens the file read-only; a file that is not an intact
// session is refused with one line and left untouched.
#include <ostream>
#include <sstream>

#include "app/cli/VerbRegistry.h"
#include "app/cli/verbs/db/DbVerbSupport.h"
#include "storage/session/SchemaVersion.h"
#include "storage/session/SessionReader.h"

namespace allocscope::cli {
namespace {

void printText(std::ostream& out, const std::string& path, const std::vector<storage::RunRow>& runs) {
    out << "session " << path << " (schema " << storage::kSchemaVersion << "), " << runs.size() << " run"
        << (runs.size() == 1 ? "" : "s") << "\n";
    for (const storage::RunRow& run : runs) {
        out << "run " << run.number << ": " << run.info.name << " [" << storage::runStatusName(run.status) << "]\n"
            << "  source: " << run.info.sourceKind << " " << run.info.source << "\n"
            << "  config: " << (run.info.config.empty() ? "(default)" : run.info.config) << "\n"
            << "  gpu: " << run.info.gpu << ", total memory " << run.info.totalMemory << " B, memory fraction "
            << run.info.memoryFraction << "\n"
            << "  events: " << run.eventCount << ", recorded " << run.createdAt << "\n";
        if (run.summary) {
            const storage::RunSummary& s = *run.summary;
            out << "  ops: " << s.opCount << ", peak allocated " << s.peakAllocated << " B, peak reserved " << s.peakReserved
                << " B, OOMs " << s.numOoms << ", cudaMalloc calls " << s.finalStats.num_device_alloc << "\n"
                << "  fragmentation at peak reserved: " << s.fragmentationAtPeak << ", max live blocks " << s.maxLiveBlocks
                << ", max segments " << s.maxSegments << "\n";
        }
        // Never "exact" unless the session stored that the replay reproduced its recording.
        std::string verdict = run.verdict.kind == storage::VerdictKind::Unknown ? std::string("unknown (not stored with this run)")
                                                                                 : run.verdict.text;
        // A what-if's verdict carries its address ties on lines of their own: indent them.
        for (std::size_t at = verdict.find('\n'); at != std::string::npos; at = verdict.find('\n', at + 5)) {
            verdict.replace(at, 1, "\n    ");
        }
        out << "  verdict: " << verdict << "\n";
        if (!run.divergence.empty()) out << "  divergence: " << run.divergence << "\n";
        if (run.rank) out << "  rank: " << run.rank->rank << " (from its " << run.rank->source << ")\n";
    }
}

void printJson(std::ostream& out, const std::string& path, const std::vector<storage::RunRow>& runs) {
    out << "{\"session\": " << jsonString(path) << ", \"schema\": " << storage::kSchemaVersion << ", \"runs\": [";
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const storage::RunRow& run = runs[i];
        out << (i > 0 ? ", " : "") << "{\"number\": " << run.number << ", \"name\": " << jsonString(run.info.name)
            << ", \"status\": " << jsonString(storage::runStatusName(run.status))
            << ", \"source_kind\": " << jsonString(run.info.sourceKind) << ", \"source\": " << jsonString(run.info.source)
            << ", \"config\": " << jsonString(run.info.config) << ", \"gpu\": " << jsonString(run.info.gpu)
            << ", \"total_memory\": " << run.info.totalMemory << ", \"memory_fraction\": " << run.info.memoryFraction
            << ", \"events\": " << run.eventCount << ", \"created_at\": " << jsonString(run.createdAt)
            << ", \"divergence\": " << jsonString(run.divergence)
            << ", \"verdict\": " << jsonString(storage::verdictKindName(run.verdict.kind))
            << ", \"verdict_text\": " << jsonString(run.verdict.text);
        if (run.rank) out << ", \"rank\": " << run.rank->rank << ", \"rank_source\": " << jsonString(run.rank->source);
        if (run.summary) {
            const storage::RunSummary& s = *run.summary;
            out << ", \"summary\": {\"ops\": " << s.opCount << ", \"peak_allocated\": " << s.peakAllocated
                << ", \"peak_reserved\": " << s.peakReserved << ", \"peak_active\": " << s.peakActive
                << ", \"peak_requested\": " << s.peakRequested << ", \"num_ooms\": " << s.numOoms
                << ", \"max_segments\": " << s.maxSegments << ", \"max_live_blocks\": " << s.maxLiveBlocks
                << ", \"max_inactive_split_bytes\": " << s.maxInactiveSplitBytes
                << ", \"fragmentation_at_peak\": " << s.fragmentationAtPeak
                << ", \"final_fragmentation\": " << s.finalFragmentation << ", \"final_stats\": {";
            const auto flat = s.finalStats.flatten();
            for (std::size_t k = 0; k < flat.size(); ++k) {
                out << (k > 0 ? ", " : "") << jsonString(flat[k].first) << ": " << flat[k].second;
            }
            out << "}}";
        }
        out << "}";
    }
    out << "]}\n";
}

int runInfo(VerbContext& ctx) {
    std::string path;
    bool json = false;
    for (const std::string& arg : ctx.args) {
        if (arg == "--json") {
            json = true;
        } else if (!arg.empty() && arg[0] == '-') {
            ctx.err << "allocscope-cli: info: unknown option '" << arg << "' (usage: allocscope-cli info SESSION [--json])\n";
            return kExitUsage;
        } else if (path.empty()) {
            path = arg;
        } else {
            ctx.err << "allocscope-cli: info takes one session file (got '" << arg << "' too)\n";
            return kExitUsage;
        }
    }
    if (path.empty()) {
        ctx.err << "allocscope-cli: info needs a session file (usage: allocscope-cli info SESSION [--json])\n";
        return kExitUsage;
    }
    try {
        storage::SessionReader reader(path);
        const auto runs = reader.runs();
        if (json) printJson(ctx.out, path, runs);
        else printText(ctx.out, path, runs);
    } catch (const storage::SessionError& e) {
        return reportSessionError(ctx, e);
    }
    return kExitOk;
}

const VerbRegistration kRegistration{Verb{
    "info", "describe a session file: its runs, sources, configs and summaries",
    "usage: allocscope-cli info SESSION [--json]\n\nOpens SESSION read-only and prints its runs (numbered from 1):\n"
    "name, status (complete / interrupted), source, config, GPU, event count and summary.\n"
    "--json prints the same as one JSON object. Exit 1 if SESSION is not an intact AllocScope session.",
    runInfo}};

}  // namespace
}  // namespace allocscope::cli
