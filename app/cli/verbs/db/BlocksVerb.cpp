// `allocscope-cli blocks TRACE|--db SESSION --run N [--at end|peak|entry:K|event:E] [--json]`: the
// live blocks at one point of a run -- the tensors the program holds there, and the freed ones
// still waiting for another stream -- with size, requested size, stream, pool, state, the event
// (and trace entry) that allocated each, and its frames. For servers without a display.
#include <map>
#include <ostream>

#include "app/cli/VerbRegistry.h"
#include "app/cli/verbs/db/DbVerbSupport.h"
#include "app/cli/verbs/db/LiveBlockText.h"
#include "app/cli/verbs/db/RunSource.h"
#include "allocator/core/HexAddress.h"
#include "storage/session/LiveBlocks.h"
#include "storage/session/UserFrames.h"

namespace allocscope::cli {
namespace {

constexpr const char* kUsage =
    "usage: allocscope-cli blocks TRACE|--db SESSION --run N [--at end|peak|entry:K|event:E] [--json]\n"
    "       [--memory-fraction F] [--total-memory BYTES | --gpu PRESET]   (with a TRACE)";

int usage(VerbContext& ctx, const std::string& problem) {
    ctx.err << "allocscope-cli: blocks: " << problem << "\n" << kUsage << "\n";
    return kExitUsage;
}

// The blocks' stacks, each looked up once however many blocks share it.
class StackCache {
public:
    StackCache(storage::SessionReader& reader, int run) : reader_(reader), run_(run) {}
    const alloc::Stack& operator()(std::uint32_t id) {
        auto it = stacks_.find(id);
        if (it == stacks_.end()) it = stacks_.emplace(id, reader_.stack(run_, id)).first;
        return it->second;
    }

private:
    storage::SessionReader& reader_;
    int run_;
    std::map<std::uint32_t, alloc::Stack> stacks_;
};

void printJson(VerbContext& ctx, storage::SessionReader& reader, int run, const std::vector<storage::LiveBlock>& blocks) {
    StackCache stackOf(reader, run);
    ctx.out << "[";
    bool first = true;
    for (const storage::LiveBlock& b : blocks) {
        ctx.out << (first ? "\n" : ",\n") << "  {\"address\": " << b.address << ", \"size\": " << b.size
                << ", \"requested_size\": " << b.requestedSize << ", \"stream\": " << b.stream << ", \"pool\": [" << b.pool.first
                << ", " << b.pool.second << "], \"segment\": " << b.segment << ", \"state\": "
                << jsonString(alloc::blockStateName(b.state)) << ", \"alloc_event\": ";
        if (b.allocEvent) ctx.out << *b.allocEvent; else ctx.out << "null";
        ctx.out << ", \"alloc_entry\": ";
        if (b.allocEntry) ctx.out << *b.allocEntry; else ctx.out << "null";
        ctx.out << ", \"live_before_history\": " << (b.restored ? "true" : "false")
                << ", \"frames\": " << framesJson(stackOf(b.stackId)) << "}";
        first = false;
    }
    ctx.out << (first ? "]\n" : "\n]\n");
}

void printText(VerbContext& ctx, storage::SessionReader& reader, int run, const storage::RunPoint& point, std::uint64_t event,
               const std::vector<storage::LiveBlock>& blocks) {
    std::int64_t bytes = 0;
    for (const storage::LiveBlock& b : blocks) bytes += static_cast<std::int64_t>(b.size);
    ctx.out << describePoint(reader, run, point, event) << "\n"
            << blocks.size() << " live blocks, " << bytesText(bytes) << " (" << bytes << " B)\n";
    if (blocks.empty()) return;
    StackCache stackOf(reader, run);
    ctx.out << "address             size          requested     stream  pool      state                alloc event  top user frame\n";
    for (const storage::LiveBlock& b : blocks) {
        char line[160];
        std::snprintf(line, sizeof line, "%-18s  %-12s  %-12s  %-6llu  %-8s  %-19s  ", alloc::hexAddress(b.address).c_str(),
                      bytesText(static_cast<std::int64_t>(b.size)).c_str(), bytesText(static_cast<std::int64_t>(b.requestedSize)).c_str(),
                      static_cast<unsigned long long>(b.stream), poolText(b.pool).c_str(), std::string(alloc::blockStateName(b.state)).c_str());
        const std::string allocated = b.restored ? "before" : b.allocEvent ? std::to_string(*b.allocEvent) : "-";
        ctx.out << line;
        char col[16];
        std::snprintf(col, sizeof col, "%-11s  ", allocated.c_str());
        ctx.out << col << storage::UserFrames::topLabel(stackOf(b.stackId)) << "\n";
    }
}

int runBlocks(VerbContext& ctx) {
    RunSource source;
    storage::RunPoint point;
    bool json = false;
    for (std::size_t i = 0; i < ctx.args.size();) {
        const std::string& arg = ctx.args[i];
        std::string error;
        if (arg == "--json") {
            json = true;
            ++i;
        } else if (arg == "--at") {
            if (i + 1 >= ctx.args.size()) return usage(ctx, "--at needs end, peak, entry:K or event:E");
            const std::optional<storage::RunPoint> parsed = storage::RunPoint::parse(ctx.args[i + 1], &error);
            if (!parsed) return usage(ctx, "--at " + error);
            point = *parsed;
            i += 2;
        } else if (source.consume(ctx.args, i, error)) {
            if (!error.empty()) return usage(ctx, error);
        } else {
            return usage(ctx, "unknown option '" + arg + "'");
        }
    }
    if (const std::string problem = source.check(); !problem.empty()) return usage(ctx, problem);
    return withInputErrors(ctx, [&] {
        storage::SessionReader& reader = source.open();
        const int run = source.checkedRun(source.runNumber());
        const std::uint64_t event = storage::LiveBlocks::eventOf(reader, run, point);
        const std::vector<storage::LiveBlock> blocks = storage::LiveBlocks::at(reader, run, event);
        if (json) printJson(ctx, reader, run, blocks);
        else printText(ctx, reader, run, point, event, blocks);
        return kExitOk;
    });
}

const VerbRegistration kRegistration{Verb{
    "blocks", "list the live blocks (tensors) at one point of a run",
    std::string(kUsage) +
        "\n\nLists the blocks live at one point of a run: allocated (active_allocated) and freed but waiting for\n"
        "another stream (active_pending_free). A TRACE (snapshot pickle or RMM CSV) is replayed under its\n"
        "recorded settings first, as `import` does, into a temporary session that is removed afterwards;\n"
        "--run N picks its Nth device. --at: end (default); peak, the first event where allocated bytes reach\n"
        "their maximum; event:E, the session's event E (from 0); entry:K, just after the snapshot's trace\n"
        "entry K (from 0, in device_traces order; only for a snapshot import whose events follow its trace,\n"
        "i.e. an exact replay, or a diverged one before its difference). --json: an array of objects with\n"
        "address, size (block bytes, what allocated_bytes counts), requested_size, stream, pool [a, b],\n"
        "segment, state, alloc_event, alloc_entry (null when unknown), live_before_history (the block was\n"
        "live before a truncated history started) and frames (innermost first, line null when unknown).\n"
        "Inputs are only read. Exit 1 bad input, 2 usage.",
    runBlocks}};

}  // namespace
}  // namespace allocscope::cli
