// `allocscope-cli stacks TRACE|--db SESSION --run N [--at POINT] [--json] [--depth D]
//  [--diff (--at POINT | --run M)]`: the live blocks' bytes by call stack, caller to callee, as an
// indented tree or JSON; with --diff, which call stacks gained or lost bytes between two events of
// one run, or at one point of two runs (two configs, two devices of a snapshot).
#include <ostream>

#include "app/cli/VerbRegistry.h"
#include "app/cli/verbs/db/DbVerbSupport.h"
#include "app/cli/verbs/db/LiveBlockText.h"
#include "app/cli/verbs/db/RunSource.h"
#include "storage/import/FrameLine.h"
#include "storage/session/StackTree.h"

namespace allocscope::cli {
namespace {

constexpr const char* kUsage =
    "usage: allocscope-cli stacks TRACE|--db SESSION --run N [--at end|peak|entry:K|event:E] [--json] [--depth D]\n"
    "       [--diff (--at POINT | --run M)]   [--memory-fraction F] [--total-memory BYTES | --gpu PRESET] (with a TRACE)";

int usage(VerbContext& ctx, const std::string& problem) {
    ctx.err << "allocscope-cli: stacks: " << problem << "\n" << kUsage << "\n";
    return kExitUsage;
}

struct Options {
    storage::RunPoint at;
    std::optional<storage::RunPoint> otherAt;  // --diff --at
    std::optional<int> otherRun;               // --diff --run
    bool diff = false;
    bool json = false;
    std::size_t depth = SIZE_MAX;
};

void printNodeJson(std::ostream& out, const storage::StackNode& node, bool root, bool diff, std::size_t depth, std::size_t limit) {
    out << "{\"label\": " << jsonString(node.label(root)) << ", \"frame\": ";
    if (root || node.noStack) {
        out << "null";
    } else {
        out << "{\"filename\": " << jsonString(node.frame.filename) << ", \"line\": "
            << (storage::FrameLine::known(node.frame.line) ? std::to_string(node.frame.line) : std::string("null"))
            << ", \"name\": " << jsonString(node.frame.name) << "}";
    }
    if (diff) {
        out << ", \"bytes_before\": " << node.bytes[0] << ", \"bytes_after\": " << node.bytes[1] << ", \"delta_bytes\": " << node.deltaBytes()
            << ", \"blocks_before\": " << node.blocks[0] << ", \"blocks_after\": " << node.blocks[1]
            << ", \"delta_blocks\": " << node.deltaBlocks();
    } else {
        out << ", \"bytes\": " << node.bytes[0] << ", \"blocks\": " << node.blocks[0];
    }
    out << ", \"children\": [";
    if (depth < limit) {
        for (std::size_t i = 0; i < node.children.size(); ++i) {
            if (i > 0) out << ", ";
            printNodeJson(out, node.children[i], false, diff, depth + 1, limit);
        }
    }
    out << "]}";
}

void printNodeText(std::ostream& out, const storage::StackNode& node, bool root, bool diff, std::size_t depth, std::size_t limit) {
    if (diff && !root && node.deltaBytes() == 0 && node.deltaBlocks() == 0) return;  // unchanged: not part of the answer
    char line[96];
    if (diff) {
        std::string change = node.deltaBytes() > 0 ? "+" : "";  // appended: g++ 12 -O3 warns falsely on "+" + string
        change += bytesText(node.deltaBytes());
        std::snprintf(line, sizeof line, "%14s %14s -> %-14s ", change.c_str(), bytesText(node.bytes[0]).c_str(),
                      bytesText(node.bytes[1]).c_str());
    } else {
        std::snprintf(line, sizeof line, "%14s %7lld blocks  ", bytesText(node.bytes[0]).c_str(), static_cast<long long>(node.blocks[0]));
    }
    out << line << std::string(2 * depth, ' ') << node.label(root) << "\n";
    if (depth >= limit) return;
    for (const storage::StackNode& child : node.children) printNodeText(out, child, false, diff, depth + 1, limit);
}

int runStacks(VerbContext& ctx) {
    RunSource source;
    Options o;
    for (std::size_t i = 0; i < ctx.args.size();) {
        const std::string& arg = ctx.args[i];
        std::string error;
        if (arg == "--json") {
            o.json = true;
            ++i;
        } else if (arg == "--diff") {
            o.diff = true;
            ++i;
        } else if (arg == "--depth") {
            std::uint64_t depth = 0;
            if (i + 1 >= ctx.args.size() || !parseCount(ctx.args[i + 1], depth)) return usage(ctx, "--depth needs a number");
            o.depth = static_cast<std::size_t>(depth);
            i += 2;
        } else if (arg == "--at") {
            if (i + 1 >= ctx.args.size()) return usage(ctx, "--at needs end, peak, entry:K or event:E");
            const std::optional<storage::RunPoint> parsed = storage::RunPoint::parse(ctx.args[i + 1], &error);
            if (!parsed) return usage(ctx, "--at " + error);
            if (o.diff) {
                if (o.otherAt || o.otherRun) return usage(ctx, "--diff compares with one --at or one --run");
                o.otherAt = *parsed;
            } else {
                o.at = *parsed;
            }
            i += 2;
        } else if (arg == "--run" && o.diff) {
            std::uint64_t number = 0;
            if (i + 1 >= ctx.args.size() || !parseCount(ctx.args[i + 1], number) || number == 0 || number > 0x7fffffff) {
                return usage(ctx, "--diff --run needs a run number (from 1)");
            }
            if (o.otherAt || o.otherRun) return usage(ctx, "--diff compares with one --at or one --run");
            o.otherRun = static_cast<int>(number);
            i += 2;
        } else if (source.consume(ctx.args, i, error)) {
            if (!error.empty()) return usage(ctx, error);
        } else {
            return usage(ctx, "unknown option '" + arg + "'");
        }
    }
    if (const std::string problem = source.check(); !problem.empty()) return usage(ctx, problem);
    if (o.diff && !o.otherAt && !o.otherRun) return usage(ctx, "--diff needs --at POINT or --run M after it");
    return withInputErrors(ctx, [&] {
        storage::SessionReader& reader = source.open();
        const int run = source.checkedRun(source.runNumber());
        const std::uint64_t event = storage::LiveBlocks::eventOf(reader, run, o.at);
        const std::vector<storage::LiveBlock> blocks = storage::LiveBlocks::at(reader, run, event);
        const auto stackOf = [&reader](int r) { return [&reader, r](std::uint32_t id) { return reader.stack(r, id); }; };
        storage::StackNode tree;
        std::string header = describePoint(reader, run, o.at, event);
        if (o.diff) {
            const int otherRun = o.otherRun ? source.checkedRun(*o.otherRun) : run;
            const storage::RunPoint otherAt = o.otherAt.value_or(o.at);
            const std::uint64_t otherEvent = storage::LiveBlocks::eventOf(reader, otherRun, otherAt);
            const std::vector<storage::LiveBlock> other = storage::LiveBlocks::at(reader, otherRun, otherEvent);
            tree = storage::StackTree::diff(blocks, stackOf(run), other, stackOf(otherRun));
            header += "\n  vs " + describePoint(reader, otherRun, otherAt, otherEvent);
        } else {
            tree = storage::StackTree::build(blocks, stackOf(run));
        }
        if (o.json) {
            printNodeJson(ctx.out, tree, true, o.diff, 0, o.depth);
            ctx.out << "\n";
        } else {
            ctx.out << header << "\n";
            printNodeText(ctx.out, tree, true, o.diff, 0, o.depth);
        }
        return kExitOk;
    });
}

const VerbRegistration kRegistration{Verb{
    "stacks", "bytes by call stack at one point of a run, or the difference between two",
    std::string(kUsage) +
        "\n\nFolds the live blocks at --at (see `help blocks`: end, peak, entry:K, event:E) into a tree of call\n"
        "stacks, caller to callee, with the bytes and blocks under each frame; blocks recorded without frames\n"
        "count under 'no stack recorded'. --depth D prints D levels below the root. --diff compares with\n"
        "another point of the same run (--diff --at POINT) or the same point of another run (--diff --run M;\n"
        "for a TRACE, its Mth device): each line is the change, then before -> after; unchanged stacks are\n"
        "left out of the text. --json: the tree as nested objects (label, frame, bytes, blocks, children;\n"
        "with --diff bytes_before, bytes_after, delta_bytes and the same for blocks). Inputs are only read.",
    runStacks}};

}  // namespace
}  // namespace allocscope::cli
