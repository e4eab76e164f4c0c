#include "app/cli/StatsJson.h"

#include <cstdint>
#include <limits>
#include <sstream>

#include "storage/import/FrameLine.h"

namespace allocscope::cli {
namespace {

void putString(std::ostringstream& out, const std::string& text) {
    out << '"';
    for (const char c : text) {
        const unsigned char u = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            out << '\\' << c;
        } else if (u < 0x20) {
            const char* digits = "0123456789abcdef";
            out << "\\u00" << digits[u >> 4] << digits[u & 15];
        } else {
            out << c;
        }
    }
    out << '"';
}

void putFrames(std::ostringstream& out, std::uint32_t stackId, const alloc::StackTable* stacks) {
    out << "[";
    if (stacks && stackId != 0 && stackId < stacks->size()) {
        const alloc::Stack& stack = stacks->stack(stackId);
        for (std::size_t i = 0; i < stack.size(); ++i) {
            out << (i ? ", " : "") << "{\"filename\": ";
            putString(out, stack[i].filename);
            // An unknown line is written as TorchDynamo wrote it (2**64-1), which keeps the file a
            // snapshot our reader (and PyTorch's tools) read, as unknown again.
            out << ", \"line\": ";
            if (storage::FrameLine::known(stack[i].line)) {
                out << stack[i].line;
            } else {
                out << std::numeric_limits<std::uint64_t>::max();
            }
            out << ", \"name\": ";
            putString(out, stack[i].name);
            out << "}";
        }
    }
    out << "]";
}

}  // namespace

std::string statsToJson(const alloc::DeviceStats& stats) {
    std::ostringstream out;
    out << "{\n";
    const auto flat = stats.flatten();
    for (std::size_t i = 0; i < flat.size(); ++i) {
        out << "  ";
        putString(out, flat[i].first);
        out << ": " << flat[i].second << (i + 1 < flat.size() ? ",\n" : "\n");
    }
    out << "}\n";
    return out.str();
}

std::string segmentsToJson(const std::vector<alloc::SegmentInfo>& segments, long long device,
                           const alloc::StackTable* stacks) {
    std::ostringstream out;
    out << "[";
    for (std::size_t s = 0; s < segments.size(); ++s) {
        const alloc::SegmentInfo& seg = segments[s];
        out << (s ? ",\n " : "\n ") << "{\"device\": " << device << ", \"address\": " << seg.address
            << ", \"total_size\": " << seg.totalSize << ", \"allocated_size\": " << seg.allocatedSize
            << ", \"active_size\": " << seg.activeSize << ", \"requested_size\": " << seg.requestedSize
            << ", \"stream\": " << seg.stream << ", \"segment_type\": \""
            << (seg.pool == alloc::PoolKind::Small ? "small" : "large")
            << "\", \"segment_pool_id\": [" << seg.poolId.first << ", " << seg.poolId.second
            << "], \"is_expandable\": " << (seg.isExpandable ? "true" : "false")
            << ", \"frames\": ";
        putFrames(out, seg.stackId, stacks);
        out << ", \"blocks\": [";
        for (std::size_t b = 0; b < seg.blocks.size(); ++b) {
            const alloc::BlockInfo& block = seg.blocks[b];
            out << (b ? ",\n   " : "\n   ") << "{\"address\": " << block.address << ", \"size\": " << block.size
                << ", \"requested_size\": " << block.requestedSize << ", \"state\": \""
                << alloc::blockStateName(block.state) << "\", \"frames\": ";
            putFrames(out, block.stackId, stacks);
            out << "}";
        }
        out << "]}";
    }
    out << (segments.empty() ? "]\n" : "\n]\n");
    return out.str();
}

}  // namespace allocscope::cli
