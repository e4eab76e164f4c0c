// The cuda-graphs workload: its program (warm-up, capture into the graph's private pool, replays
// that allocate nothing, eager work around them, reset) and what the allocator does with it, op by
// op: the captured step's memory stays in the pool, eager requests after the capture never land in
// the pool's segments (they get segments of their own), and reset + empty_cache() returns the pool.
#include <QtTest>

#include <map>
#include <set>

#include "WorkloadTestUtil.h"
#include "allocator/compare/ComparisonEngine.h"
#include "allocator/core/CachingAllocator.h"
#include "allocator/core/EventSink.h"
#include "allocator/core/InvariantChecker.h"
#include "allocator/core/ProgramRunner.h"
#include "allocator/device/GpuPresets.h"
#include "allocator/device/SimulatedDevice.h"
#include "allocator/workloads/CudaGraphsWorkload.h"

using namespace allocscope::alloc;

namespace {

constexpr PoolId kPool = CudaGraphsWorkload::kGraphPool;

std::size_t indexOf(const Program& p, OpKind kind) {
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
        if (p.ops[i].kind == kind) return i;
    }
    return p.ops.size();
}

// The op that begins the first phase named `name`.
std::size_t phaseBegin(const Program& p, const std::string& name) {
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
        const Op& op = p.ops[i];
        if (op.kind == OpKind::Phase && op.begin && p.labels[op.labelId] == name) return i;
    }
    return p.ops.size();
}

std::size_t count(const Program& p, OpKind kind) {
    std::size_t n = 0;
    for (const Op& op : p.ops) n += op.kind == kind;
    return n;
}

// The program's ops applied one at a time to a simulated H100, with the invariant checker
// watching every event.
struct Run {
    explicit Run(const std::vector<std::pair<std::string, std::string>>& params = {})
        : program(wltest::generate("cuda-graphs", params).program),
          device(*findGpuPreset("h100-80gb")),
          checker(AllocatorConfig{}.maxSplitSize) {
        tee.add(&events);
        tee.add(&checker);
        allocator = std::make_unique<CachingAllocator>(AllocatorConfig{}, device, &tee);
        runner = std::make_unique<ProgramRunner>(*allocator);
    }
    // Applies ops up to (not including) `end`; false on a program error.
    bool runTo(std::size_t end) {
        for (; next < end; ++next) {
            if (!runner->apply(program.ops[next], next, result)) return false;
        }
        return true;
    }
    bool runAll() { return runTo(program.ops.size()); }
    std::vector<SegmentInfo> poolSegments() const {
        std::vector<SegmentInfo> out;
        for (const SegmentInfo& s : allocator->segments()) {
            if (s.poolId == kPool) out.push_back(s);
        }
        return out;
    }
    std::uint64_t reserved() const {
        return static_cast<std::uint64_t>(allocator->stats().reserved_bytes[kAggregate].current);
    }
    std::string check() const { return checker.check(*allocator); }

    Program program;
    SimulatedDevice device;
    VectorSink events;
    InvariantChecker checker;
    TeeSink tee;
    std::unique_ptr<CachingAllocator> allocator;
    std::unique_ptr<ProgramRunner> runner;
    ProgramResult result;
    std::size_t next = 0;
};

std::uint64_t freeBytes(const std::vector<SegmentInfo>& segments) {
    std::uint64_t bytes = 0;
    for (const SegmentInfo& s : segments) {
        for (const BlockInfo& b : s.blocks) bytes += b.state == BlockState::Inactive ? b.size : 0;
    }
    return bytes;
}

std::uint64_t largestFree(const std::vector<SegmentInfo>& segments) {
    std::uint64_t largest = 0;
    for (const SegmentInfo& s : segments) {
        for (const BlockInfo& b : s.blocks) {
            if (b.state == BlockState::Inactive) largest = std::max(largest, b.size);
        }
    }
    return largest;
}

}  // namespace

class TestCudaGraphsWorkload : public QObject {
    Q_OBJECT
private slots:
    void registeredAndDescribed() {
        const Workload* w = WorkloadRegistry::instance().find("cuda-graphs");
        QVERIFY(w != nullptr);
        QVERIFY(w->description().size() > 200);
        QVERIFY(!w->summary().empty());
        QVERIFY(findGpuPreset(w->defaultGpu()).has_value());
        QVERIFY(!w->usesSeed());
        for (const ParamSpec& p : w->params()) {
            QVERIFY2(!p.help.empty(), p.name.c_str());
            parseParamValue(p, p.defaultValue);
        }
    }

    // As torch.cuda.graph does it: empty_cache() right before the capture, the capture stream's
    // allocations routed to the graph's pool between begin and end, a release at reset; the
    // replays make no allocator calls at all.
    void programCapturesOnTheCaptureStream() {
        const Program p = wltest::generate("cuda-graphs").program;
        QCOMPARE(count(p, OpKind::BeginAllocateToPool), std::size_t{1});
        QCOMPARE(count(p, OpKind::EndAllocateToPool), std::size_t{1});
        QCOMPARE(count(p, OpKind::ReleasePool), std::size_t{1});
        const std::size_t begin = indexOf(p, OpKind::BeginAllocateToPool);
        const std::size_t end = indexOf(p, OpKind::EndAllocateToPool);
        const std::size_t release = indexOf(p, OpKind::ReleasePool);
        QVERIFY(begin < end && end < release);
        const Op& b = p.ops[begin];
        QCOMPARE(b.poolId(), kPool);
        QVERIFY((b.flags & kOpCapture) != 0);
        QVERIFY((b.flags & kOpAllStreams) == 0);
        QCOMPARE(b.stream, CudaGraphsWorkload::kCaptureStream);
        QCOMPARE(p.ops[begin - 1].kind, OpKind::EmptyCache);
        QCOMPARE(p.ops.back().kind, OpKind::EmptyCache);
        std::size_t captured = 0;
        for (std::size_t i = 0; i < p.ops.size(); ++i) {
            const Op& op = p.ops[i];
            if (op.kind != OpKind::Alloc) continue;
            const bool inCapture = i > begin && i < end;
            QCOMPARE(op.stream == CudaGraphsWorkload::kCaptureStream, inCapture);
            captured += inCapture;
        }
        QVERIFY(captured > 10);
        // Each "replay" phase is empty: g.replay() asks the allocator for nothing.
        std::size_t replays = 0;
        for (std::size_t i = 0; i < p.ops.size(); ++i) {
            const Op& op = p.ops[i];
            if (op.kind != OpKind::Phase || !op.begin || p.labels[op.labelId] != "replay") continue;
            ++replays;
            QCOMPARE(p.ops[i + 1].kind, OpKind::Phase);
            QVERIFY(!p.ops[i + 1].begin);
        }
        QCOMPARE(replays, std::size_t{6});
        // capture=false: no pool ops at all, every allocation on the default stream.
        const Program eager = wltest::generate("cuda-graphs", {{"capture", "false"}}).program;
        QCOMPARE(count(eager, OpKind::BeginAllocateToPool) + count(eager, OpKind::ReleasePool), std::size_t{0});
        for (const Op& op : eager.ops) {
            if (op.kind == OpKind::Alloc) QCOMPARE(op.stream, kComputeStream);
        }
    }

    // At the end of the capture every block the step allocated is in the graph's pool; what the
    // step freed during the capture is cached there (activations), and what it keeps (static
    // output, loss, gradients) is live there.
    void captureHoldsTheStepInItsPool() {
        Run r;
        const std::size_t begin = indexOf(r.program, OpKind::BeginAllocateToPool);
        const std::size_t end = indexOf(r.program, OpKind::EndAllocateToPool);
        QVERIFY(r.runTo(begin + 1));
        QVERIFY(r.poolSegments().empty());
        const std::uint64_t before = r.reserved();
        QVERIFY(r.runTo(end + 1));
        for (std::size_t i = begin + 1; i < end; ++i) {
            const Op& op = r.program.ops[i];
            if (op.kind != OpKind::Alloc) continue;
            const auto address = r.runner->addressOf(op.id);
            if (!address) continue;  // freed later in the capture
            QCOMPARE(r.allocator->poolOfAddress(*address), std::optional<PoolId>(kPool));
        }
        const std::vector<SegmentInfo> pool = r.poolSegments();
        QVERIFY(!pool.empty());
        std::uint64_t poolBytes = 0, poolAllocated = 0;
        for (const SegmentInfo& s : pool) {
            poolBytes += s.totalSize;
            poolAllocated += s.allocatedSize;
            QCOMPARE(s.stream, CudaGraphsWorkload::kCaptureStream);
        }
        QCOMPARE(r.reserved() - before, poolBytes);  // the capture reserved only pool segments
        // Static outputs and the four layers' gradients (16 MiB weights) stay allocated...
        QVERIFY(poolAllocated >= 4 * 16 * kMiB);
        // ...and at least three freed 32 MiB activations sit cached in the pool.
        QVERIFY(freeBytes(pool) >= 3 * 32 * kMiB);
        QVERIFY(largestFree(pool) >= 32 * kMiB);
        QCOMPARE(QString::fromStdString(r.check()), QString());
    }

    // After the capture, eager requests on the default stream (the next batch, the evaluation)
    // never get a block of the pool, although the pool caches free blocks large enough: they make
    // default-pool segments of their own. The pool's segments do not change until the reset.
    void eagerWorkAfterTheCaptureGetsItsOwnSegments() {
        Run r;
        const std::size_t end = indexOf(r.program, OpKind::EndAllocateToPool);
        const std::size_t reset = phaseBegin(r.program, "reset graph");
        QVERIFY(reset < indexOf(r.program, OpKind::ReleasePool));
        QVERIFY(r.runTo(end + 1));
        const std::vector<SegmentInfo> poolAfterCapture = r.poolSegments();
        const std::uint64_t poolFree = freeBytes(poolAfterCapture);
        const std::size_t mark = r.events.events.size();
        std::set<std::uint64_t> poolAddresses;
        for (const SegmentInfo& s : poolAfterCapture) poolAddresses.insert(s.address);

        std::uint64_t eagerBytes = 0;
        for (std::size_t i = end + 1; i < reset; ++i) {
            QVERIFY(r.runTo(i + 1));
            const Op& op = r.program.ops[i];
            if (op.kind != OpKind::Alloc) continue;
            QCOMPARE(op.stream, kComputeStream);
            const auto address = r.runner->addressOf(op.id);
            QVERIFY(address.has_value());
            QCOMPARE(r.allocator->poolOfAddress(*address), std::optional<PoolId>(PoolId{}));
            eagerBytes = std::max(eagerBytes, op.size);
        }
        QVERIFY(eagerBytes > 0);
        QVERIFY(poolFree >= eagerBytes);  // the pool could have served each of them

        std::size_t newSegments = 0;
        for (std::size_t k = mark; k < r.events.events.size(); ++k) {
            const Event& e = r.events.events[k];
            QVERIFY(e.action != EventAction::SegmentFree);
            if (e.action != EventAction::SegmentAlloc) continue;
            ++newSegments;
            QVERIFY(poolAddresses.count(e.address) == 0);
            QCOMPARE(r.allocator->poolOfAddress(e.address), std::optional<PoolId>(PoolId{}));
        }
        // The evaluation's two 32 MiB activations; the batches fit beside the static input.
        QVERIFY(newSegments >= 2);

        const std::vector<SegmentInfo> poolBeforeReset = r.poolSegments();
        QCOMPARE(poolBeforeReset.size(), poolAfterCapture.size());
        for (std::size_t k = 0; k < poolBeforeReset.size(); ++k) {
            QCOMPARE(poolBeforeReset[k].address, poolAfterCapture[k].address);
            QCOMPARE(poolBeforeReset[k].totalSize, poolAfterCapture[k].totalSize);
            QCOMPARE(poolBeforeReset[k].allocatedSize, poolAfterCapture[k].allocatedSize);
        }
        QCOMPARE(QString::fromStdString(r.check()), QString());
    }

    // Default parameters end with reset + empty_cache(): every pool segment goes back to the
    // driver (cause empty_cache). Without the reset, the same empty_cache() keeps them all.
    void resetAndEmptyCacheReturnThePool() {
        Run reset;
        QVERIFY(reset.runTo(phaseBegin(reset.program, "reset graph")));
        const std::vector<SegmentInfo> pool = reset.poolSegments();
        QVERIFY(!pool.empty());
        std::uint64_t live = 0;
        for (const SegmentInfo& s : pool) live += s.allocatedSize;
        QVERIFY(live > 0);  // the static outputs and gradients, dropped by the reset phase
        QVERIFY(reset.runAll());
        QVERIFY(reset.result.ok());
        QVERIFY(reset.poolSegments().empty());
        std::set<std::uint64_t> freed;
        for (const Event& e : reset.events.events) {
            if (e.action == EventAction::SegmentFree && e.cause == EventCause::EmptyCache) freed.insert(e.address);
        }
        for (const SegmentInfo& s : pool) QVERIFY(freed.count(s.address) == 1);
        QCOMPARE(QString::fromStdString(reset.check()), QString());

        Run kept(std::vector<std::pair<std::string, std::string>>{{"reset", "false"}});
        QVERIFY(kept.runAll());
        QCOMPARE(count(kept.program, OpKind::ReleasePool), std::size_t{0});
        const std::vector<SegmentInfo> keptPool = kept.poolSegments();
        QCOMPARE(keptPool.size(), pool.size());
        std::uint64_t keptBytes = 0;
        for (const SegmentInfo& s : keptPool) keptBytes += s.totalSize;
        // The pool is everything empty_cache() could not give back beyond what the reset run keeps.
        QCOMPARE(kept.reserved() - reset.reserved(), keptBytes);
        QVERIFY(freeBytes(keptPool) > 0);  // cached free blocks that empty_cache() may not touch
        QCOMPARE(QString::fromStdString(kept.check()), QString());
    }

    // Without a graph the evaluations reuse the training step's cached blocks: no segment is made
    // inside an "eager eval" phase (with the graph, the first evaluation makes two).
    void withoutAGraphTheEvaluationMakesNoSegment() {
        for (const bool capture : {false, true}) {
            Run r(std::vector<std::pair<std::string, std::string>>{{"capture", capture ? "true" : "false"}});
            QVERIFY(r.runAll());
            std::vector<bool> inEval(r.program.ops.size(), false);
            bool open = false;
            for (std::size_t i = 0; i < r.program.ops.size(); ++i) {
                const Op& op = r.program.ops[i];
                if (op.kind == OpKind::Phase && r.program.labels[op.labelId] == "eager eval") open = op.begin;
                inEval[i] = open;
            }
            std::size_t evalSegments = 0;
            for (const Event& e : r.events.events) evalSegments += e.action == EventAction::SegmentAlloc && inEval[e.opIndex];
            QCOMPARE(evalSegments, capture ? std::size_t{2} : std::size_t{0});
            QCOMPARE(QString::fromStdString(r.check()), QString());
        }
    }

    // The same steps without a graph reuse the training step's cached blocks for the eager work,
    // so the graph costs extra reserved memory; after reset + empty_cache() nothing of it is left.
    void theGraphCostsReservedMemoryUntilItIsReset() {
        const auto metrics = [](const std::vector<std::pair<std::string, std::string>>& params) {
            return ComparisonEngine::runOne(wltest::generate("cuda-graphs", params).program, wltest::config(""), wltest::h100());
        };
        const RunMetrics graph = metrics({});
        const RunMetrics eager = metrics({{"capture", "false"}});
        QVERIFY(!graph.error && !eager.error);
        QVERIFY(!graph.oom() && !eager.oom());
        QVERIFY(graph.peakReserved > eager.peakReserved);
        QVERIFY(graph.cudaMallocs > eager.cudaMallocs);
        // Both keep the model and Adam's state; the graph also its static input.
        QCOMPARE(graph.finalAllocated, eager.finalAllocated + 8 * kMiB);
    }
};

QTEST_GUILESS_MAIN(TestCudaGraphsWorkload)
#include "TestCudaGraphsWorkload.moc"
