#include "OomRecording.h"

#include "allocator/config/ConfigParser.h"
#include "allocator/core/CachingAllocator.h"
#include "allocator/core/EventSink.h"
#include "allocator/core/ProgramRunner.h"
#include "allocator/device/SimulatedDevice.h"
#include "allocator/workloads/ProgramBuilder.h"
#include "storage/formats/PickleWriter.h"

using namespace allocscope;

namespace oomtest {
namespace {

constexpr std::uint64_t kMiB = 1ull << 20;

formats::FrameList framesOf(const alloc::StackTable& stacks, std::uint32_t id) {
    std::vector<formats::SnapshotFrame> frames;
    if (id == 0 || id >= stacks.size()) return frames;
    for (const alloc::Frame& f : stacks.stack(id)) frames.push_back({f.filename, f.line, f.name});
    return frames;
}

}  // namespace

std::uint64_t Limit::bytes() const {
    const std::uint64_t room = totalMemory - otherMemory;
    if (!memoryFraction) return room;
    return std::min(room, static_cast<std::uint64_t>(*memoryFraction * static_cast<double>(totalMemory)));
}

alloc::Program holesProgram(const Shape& shape, alloc::StackTable& stacks) {
    alloc::ProgramBuilder b("train.py");
    const std::uint32_t sScratch = b.stack("scratch", 12, "step", 30);
    const std::uint32_t sKeep = b.stack("activation", 14, "step", 31);
    const std::uint32_t sHole = b.stack("temporary", 16, "step", 32);
    const std::uint32_t sRequest = b.stack("logits", 50);
    std::vector<std::uint64_t> holes;
    for (int i = 0; i < shape.steps; ++i) {
        const std::uint64_t scratch = b.alloc((2 * shape.keepMiB + shape.holeMiB) * kMiB, sScratch, 0);
        b.free(scratch);
        b.alloc(shape.keepMiB * kMiB, sKeep, 0);
        holes.push_back(b.alloc(shape.holeMiB * kMiB, sHole, 0));
        b.alloc(shape.keepMiB * kMiB, sKeep, 0);
    }
    for (const std::uint64_t id : holes) b.free(id);
    b.alloc(shape.requestMiB * kMiB, sRequest, 0);
    alloc::GeneratedProgram generated = b.take();
    stacks = std::move(generated.stacks);
    return std::move(generated.program);
}

Recording record(const Shape& shape, const std::string& config, const Limit& limit, const std::string& path) {
    alloc::StackTable stacks;
    alloc::Program program = holesProgram(shape, stacks);
    return recordProgram(std::move(program), std::move(stacks), config, limit, path);
}

Recording recordProgram(alloc::Program program, alloc::StackTable stacks, const std::string& config, const Limit& limit,
                        const std::string& path) {
    Recording out;
    out.program = std::move(program);
    out.stacks = std::move(stacks);
    const alloc::ParseResult parsed = alloc::parseConfig(config);
    alloc::SimulatedDevice device(limit.totalMemory, limit.otherMemory);
    alloc::VectorSink sink;
    alloc::CachingAllocator allocator(parsed.config, device, &sink);
    if (limit.memoryFraction) allocator.setMemoryFraction(*limit.memoryFraction);
    alloc::ProgramRunner runner(allocator, alloc::ProgramRunnerOptions{true});
    const alloc::ProgramResult result = runner.run(out.program);
    if (!result.ooms.empty()) out.oomOp = result.ooms.front().opIndex;
    out.peakReserved = allocator.stats().reserved_bytes[alloc::kAggregate].peak;

    formats::Snapshot snapshot;
    snapshot.device_traces.emplace_back();
    for (const alloc::Event& e : sink.events) {
        if (e.action == alloc::EventAction::Snapshot) continue;
        formats::TraceEntry t;
        t.action = std::string(alloc::actionName(e.action));
        if (e.action == alloc::EventAction::Oom) {
            t.device_free = e.address;
            t.has_device_free = true;
        } else {
            t.addr = e.address;
            t.has_addr = true;
        }
        t.size = e.size;
        t.stream = e.stream;
        t.frames = framesOf(out.stacks, e.stackId);
        t.compile_context = "N/A";
        t.user_metadata = "";
        snapshot.device_traces.back().push_back(std::move(t));
    }
    for (const alloc::SegmentInfo& s : allocator.segments()) {
        formats::SnapshotSegment seg;
        seg.address = s.address;
        seg.total_size = s.totalSize;
        seg.allocated_size = s.allocatedSize;
        seg.active_size = s.activeSize;
        seg.requested_size = s.requestedSize;
        seg.stream = s.stream;
        seg.segment_type = s.pool == alloc::PoolKind::Small ? "small" : "large";
        seg.is_expandable = s.isExpandable;
        seg.frames = framesOf(out.stacks, s.stackId);
        for (const alloc::BlockInfo& blk : s.blocks) {
            seg.blocks.push_back({blk.address, blk.size, blk.requestedSize, std::string(alloc::blockStateName(blk.state)),
                                  framesOf(out.stacks, blk.stackId)});
        }
        snapshot.segments.push_back(std::move(seg));
    }
    snapshot.allocator_settings.present = true;
    snapshot.allocator_settings.conf = config;
    formats::PickleWriter::writeFile(snapshot, path);
    return out;
}

}  // namespace oomtest
