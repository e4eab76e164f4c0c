#pragma once
// Helpers of the storage tests: a random program (every op kind, three streams, pending frees,
// resets, empty_cache, OOMs under a small device) run through the real CachingAllocator with a
// SessionRecorder attached, and comparisons of states.
#include <QtTest>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/FileBytes.h"
#include "allocator/config/AllocatorConfig.h"
#include "allocator/core/CachingAllocator.h"
#include "allocator/core/EventSink.h"
#include "allocator/core/Op.h"
#include "allocator/core/ProgramRunner.h"
#include "allocator/device/SimulatedDevice.h"
#include "allocator/workloads/Rng.h"
#include "storage/session/SessionRecorder.h"
#include "storage/session/SessionWriter.h"

namespace storagetest {

using namespace allocscope;

// Ops of every kind; live bytes wander up to ~the device size so OOMs and retries happen.
inline alloc::Program randomProgram(std::uint64_t seed, std::size_t ops) {
    alloc::Program program;
    alloc::Rng rng(seed);
    std::vector<std::uint64_t> live;
    std::vector<std::uint64_t> pendingIds;
    std::map<std::uint64_t, bool> used;  // id -> record_stream'd on another stream
    std::map<std::uint64_t, std::size_t> streamOf;
    std::uint64_t nextId = 1;
    const alloc::StreamId streams[3] = {0, 0x7a01, 0x7a02};
    for (std::size_t i = 0; i < ops; ++i) {
        const double r = rng.unit();
        if (r < 0.46 || live.size() < 8) {
            std::uint64_t size = 0;
            const double kind = rng.unit();
            if (kind < 0.55) size = rng.logUniform(1, 1 << 20);
            else if (kind < 0.93) size = rng.logUniform(1 << 20, 24 << 20);
            else size = rng.logUniform(24 << 20, 400 << 20);
            const std::uint64_t id = nextId++;
            streamOf[id] = rng.uniform(0, 2);
            program.ops.push_back(alloc::Op::alloc(id, size, streams[streamOf[id]], static_cast<std::uint32_t>(rng.uniform(0, 3))));
            live.push_back(id);
        } else if (r < 0.90) {
            const std::size_t k = rng.uniform(0, live.size() - 1);
            const std::uint64_t id = live[k];
            live[k] = live.back();
            live.pop_back();
            program.ops.push_back(alloc::Op::free(id));
            if (used[id]) pendingIds.push_back(id);
        } else if (r < 0.94) {
            const std::uint64_t id = live[rng.uniform(0, live.size() - 1)];
            program.ops.push_back(alloc::Op::recordStream(id, streams[(streamOf[id] + rng.uniform(1, 2)) % 3]));
            used[id] = true;
        } else if (r < 0.975) {
            if (!pendingIds.empty()) {
                const std::size_t k = rng.uniform(0, pendingIds.size() - 1);
                program.ops.push_back(alloc::Op::completePending(pendingIds[k]));
                pendingIds[k] = pendingIds.back();
                pendingIds.pop_back();
            }
        } else if (r < 0.982) {
            program.ops.push_back(alloc::Op::simple(alloc::OpKind::EmptyCache));
            pendingIds.clear();
        } else if (r < 0.986) {
            program.ops.push_back(alloc::Op::simple(alloc::OpKind::Synchronize));
            pendingIds.clear();
        } else if (r < 0.990) {
            program.ops.push_back(alloc::Op::simple(alloc::OpKind::ResetPeakStats));
        } else if (r < 0.993) {
            program.ops.push_back(alloc::Op::simple(alloc::OpKind::ResetAccumulatedStats));
        } else {
            // Free a lot at once so segments empty out and get released.
            for (std::size_t j = 0; j < live.size() / 2; ++j) {
                const std::uint64_t id = live.back();
                live.pop_back();
                program.ops.push_back(alloc::Op::free(id));
                if (used[id]) pendingIds.push_back(id);
            }
        }
    }
    return program;
}

inline alloc::AllocatorConfig configNamed(const std::string& name) {
    alloc::AllocatorConfig config;
    if (name == "split") {
        config.maxSplitSize = 64 * alloc::kMiB;
        config.garbageCollectionThreshold = 0.6;
    } else if (name == "expandable") {
        config.expandableSegments = true;
    }
    return config;
}

inline alloc::StackTable sampleStacks() {
    alloc::StackTable stacks;
    stacks.intern({{"train.py", 10, "forward"}, {"model.py", 42, "linear"}});
    stacks.intern({{"train.py", 11, "backward"}});
    stacks.intern({{"train.py", 10, "forward"}, {"model.py", 43, "gelu"}});
    return stacks;
}

struct Truth {
    std::vector<alloc::SegmentInfo> segments;
    alloc::DeviceStats stats;
};

// Runs `program` on a fresh allocator (a 2 GiB device) with a recorder (if `writer`) and a
// VectorSink. After each op, `afterOp(eventCount, allocator)` is called.
struct RecordedRun {
    int runNumber = 0;
    std::vector<alloc::Event> events;
    alloc::DeviceStats finalStats;
    std::vector<alloc::SegmentInfo> finalSegments;
};

inline RecordedRun recordProgram(storage::SessionWriter* writer, const alloc::Program& program, const std::string& configName,
                                 storage::RecorderOptions options = {},
                                 const std::function<void(std::uint64_t, alloc::CachingAllocator&)>& afterOp = {},
                                 double fraction = 0.9) {
    alloc::SimulatedDevice device(2ull << 30, 0);
    alloc::VectorSink vector;
    alloc::TeeSink tee;
    tee.add(&vector);
    alloc::CachingAllocator allocator(configNamed(configName), device, &tee);
    allocator.setMemoryFraction(fraction);
    std::unique_ptr<storage::SessionRecorder> recorder;
    if (writer != nullptr) {
        storage::RunInfo info;
        info.name = "random " + configName;
        info.source = "storage test program";
        info.config = configName;
        info.gpu = "test-2g";
        info.totalMemory = device.totalMemory();
        info.memoryFraction = fraction;
        recorder = std::make_unique<storage::SessionRecorder>(*writer, info, allocator.stats(), options);
        tee.add(recorder.get());
    }
    alloc::ProgramRunner runner(allocator);
    alloc::ProgramResult result;
    for (std::size_t i = 0; i < program.ops.size(); ++i) {
        allocator.setOpIndex(i);
        if (!runner.apply(program.ops[i], i, result)) {
            // complete_pending of a tensor whose alloc hit an OOM (the generator cannot know).
            if (result.error && program.ops[i].kind == alloc::OpKind::CompletePending) {
                result.error.reset();
                continue;
            }
            if (result.error) qWarning("program stopped at op %zu: %s", i, result.error->message.c_str());
            break;
        }
        if (recorder) recorder->syncStats(allocator.stats());
        if (afterOp) afterOp(vector.events.size(), allocator);
    }
    RecordedRun run;
    if (recorder) {
        const alloc::StackTable stacks = sampleStacks();
        recorder->finish(&stacks);
        run.runNumber = recorder->runNumber();
    }
    run.events = std::move(vector.events);
    for (std::size_t i = 0; i < run.events.size(); ++i) run.events[i].seq = i;
    run.finalStats = allocator.stats();
    run.finalSegments = allocator.segments();
    return run;
}

// A readable difference between two layouts, or "" if they are equal.
inline std::string layoutDifference(const std::vector<alloc::SegmentInfo>& want, const std::vector<alloc::SegmentInfo>& got) {
    std::ostringstream out;
    if (want.size() != got.size()) {
        out << "segment count " << got.size() << " != " << want.size();
        return out.str();
    }
    for (std::size_t i = 0; i < want.size(); ++i) {
        const auto& a = want[i];
        const auto& b = got[i];
        if (a.address != b.address || a.totalSize != b.totalSize || a.allocatedSize != b.allocatedSize ||
            a.activeSize != b.activeSize || a.requestedSize != b.requestedSize || a.stream != b.stream || a.pool != b.pool ||
            a.isExpandable != b.isExpandable || a.stackId != b.stackId || a.blocks.size() != b.blocks.size()) {
            out << "segment " << i << " at " << a.address << ": got address " << b.address << " size " << b.totalSize << "/"
                << a.totalSize << " blocks " << b.blocks.size() << "/" << a.blocks.size() << " allocated " << b.allocatedSize
                << "/" << a.allocatedSize << " requested " << b.requestedSize << "/" << a.requestedSize << " stack " << b.stackId
                << "/" << a.stackId;
            return out.str();
        }
        for (std::size_t k = 0; k < a.blocks.size(); ++k) {
            const auto& x = a.blocks[k];
            const auto& y = b.blocks[k];
            if (x.address != y.address || x.size != y.size || x.requestedSize != y.requestedSize || x.state != y.state ||
                x.stackId != y.stackId) {
                out << "segment " << i << " block " << k << " at " << x.address << ": got " << y.address << " size " << y.size
                    << "/" << x.size << " requested " << y.requestedSize << "/" << x.requestedSize << " state "
                    << static_cast<int>(y.state) << "/" << static_cast<int>(x.state) << " stack " << y.stackId << "/" << x.stackId;
                return out.str();
            }
        }
    }
    return {};
}

inline std::string statsDifference(const alloc::DeviceStats& want, const alloc::DeviceStats& got) {
    const auto a = want.flatten();
    const auto b = got.flatten();
    std::ostringstream out;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i].second != b[i].second) out << a[i].first << ": got " << b[i].second << " want " << a[i].second << "; ";
    }
    return out.str();
}

inline std::string readAll(const std::string& path) { return testfiles::readBytes(path); }

inline bool sidecarsPresent(const std::string& path) {
    for (const char* suffix : {"-wal", "-shm", "-journal"}) {
        if (std::filesystem::exists(path + suffix)) return true;
    }
    return false;
}

}  // namespace storagetest
