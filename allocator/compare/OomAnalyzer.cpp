#include "allocator/compare/OomAnalyzer.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "allocator/compare/ComparisonEngine.h"
#include "allocator/compare/Recommender.h"
#include "allocator/config/ConfigParser.h"
#include "allocator/core/CachingAllocator.h"
#include "allocator/core/FormatSize.h"
#include "allocator/replay/ConfigReplay.h"
#include "allocator/replay/LimitInference.h"
#include "allocator/replay/TraceReplayer.h"

namespace allocscope::alloc {
namespace {

// The recording up to and including entry `last`: its replay ends in the state at the failure.
RecordedTrace prefix(const RecordedTrace& trace, std::size_t last) {
    RecordedTrace cut;
    cut.origin = trace.origin;
    cut.device = trace.device;
    cut.settings = trace.settings;
    cut.hasSegmentEvents = trace.hasSegmentEvents;
    cut.streams = trace.streams;
    cut.stacks = trace.stacks;
    cut.phaseNames = trace.phaseNames;
    SpillArray<RecordedEntry>::Walk walk(trace.entries);
    for (std::size_t i = 0; i <= last && i < trace.entries.size(); ++i) {
        walk.at(i);
        cut.entries.push_back(trace.entries[i]);
    }
    cut.entries.doneWriting();
    for (std::size_t i = 0; i < trace.phases.size(); ++i) {
        if (trace.phases[i].entryIndex <= last) cut.phases.push_back(trace.phases[i]);
    }
    cut.phases.doneWriting();
    return cut;  // no final segments: the recording's are those of its end, not of the failure
}


// One config's run at one limit: did it OOM (first where), and its peak reserved.
struct Outcome {
    bool oom = false;
    std::optional<std::uint64_t> oomOp;
    std::uint64_t peakReserved = 0;
    bool modelled = false;  // cudaMallocAsync: a fitted model (AsyncBackendModel.h), not segments
};

// Runs configs the way `replay --config` does (ConfigReplay: the recorded config checked against
// the recording, another a what-if whose new segments the driver model places), so the recorded
// config OOMs exactly where the recording did. cudaMallocAsync keeps no segments to replay
// into: it runs the recorded program through its model (ComparisonEngine), as `compare` does.
class WhatIfRunner {
public:
    WhatIfRunner(const RecordedTrace& trace, const AllocatorConfig& recorded, const MemoryLimit& limit, const Program& program)
        : trace_(trace), recorded_(recorded), limit_(limit), program_(program) {
        // The program's explicit empty_cache() calls and private pools, learnt once.
        ReplayOptions exact;
        exact.config = recorded;
        exact.keepOps = false;
        LimitInference::apply(limit, exact);
        const ReplayResult learnt = TraceReplayer::replay(trace, exact);
        emptyCacheSteps_ = learnt.emptyCacheSteps;
        poolAssignments_ = learnt.poolAssignments;
    }

    Outcome run(const CompareConfig& config, std::uint64_t bytes) const {
        Outcome out;
        const MemoryLimit at = limit_.at(bytes);
        if (config.config.backend == Backend::CudaMallocAsync) {
            const RunMetrics run = ComparisonEngine::runOne(program_, config, deviceOf(at));
            out.oom = run.oom();
            if (out.oom) out.oomOp = run.ooms.front().opIndex;
            out.peakReserved = run.peakReserved;
            out.modelled = true;
            return out;
        }
        ReplayOptions options;
        options.config = config.config;
        options.keepOps = false;
        options.continueAfterOom = false;  // the first OOM answers the question
        LimitInference::apply(at, options);
        const bool recorded = config.config == recorded_;
        if (!recorded) {
            options.emptyCacheSteps = emptyCacheSteps_;
            options.poolAssignments = poolAssignments_;
        }
        const ConfigReplay plan(trace_, recorded_, options, WhatIfPlacement::Driver);
        const ReplayResult r = plan.run();
        out.oomOp = r.unexpectedOomOp;
        for (const RecordedOomOutcome& o : r.recordedOoms) {
            if (o.reproduced && (!out.oomOp || o.opIndex < *out.oomOp)) out.oomOp = o.opIndex;
        }
        out.oom = out.oomOp.has_value();
        out.peakReserved = r.stats.reserved_bytes[kAggregate].peak;
        return out;
    }

private:
    static CompareDevice deviceOf(const MemoryLimit& limit) {
        CompareDevice d;
        d.name = limit.deviceName;
        d.totalMemory = limit.totalMemory;
        d.otherMemory = limit.otherMemory;
        d.memoryFraction = limit.memoryFraction;
        return d;
    }

    const RecordedTrace& trace_;
    const AllocatorConfig& recorded_;
    const MemoryLimit& limit_;
    const Program& program_;
    std::vector<std::size_t> emptyCacheSteps_;
    std::map<std::size_t, PoolId> poolAssignments_;
};

std::vector<std::string> framesOf(const StackTable& stacks, std::uint32_t id) {
    std::vector<std::string> out;
    if (id == 0 || id >= stacks.size()) return out;
    for (const Frame& f : stacks.stack(id)) out.push_back(f.filename + ":" + std::to_string(f.line) + ":" + f.name);
    return out;
}

void whatIf(OomAnswer& answer, const RecordedTrace& trace, const Program& program, const AllocatorConfig& recorded) {
    const MemoryLimit& limit = answer.limit;
    std::vector<CompareConfig> configs = Recommender::grid(limit.cause == MemoryLimit::Cause::MemoryFraction ||
                                                           limit.memoryFraction.has_value());
    const auto own = std::find_if(configs.begin(), configs.end(), [&](const CompareConfig& c) { return c.config == recorded; });
    if (own == configs.end()) {
        const std::string text = formatConfig(recorded);
        configs.insert(configs.begin(), CompareConfig{text.empty() ? "default" : text, recorded});
    } else {
        std::rotate(configs.begin(), own, own + 1);  // the recorded config first
    }
    const WhatIfRunner runner(trace, recorded, limit, program);
    for (const CompareConfig& config : configs) {
        OomWhatIfRow row;
        row.config = config.label;
        row.recorded = config.config == recorded;
        const Outcome run = runner.run(config, limit.bytes);
        row.oom = run.oom;
        row.oomOp = run.oomOp;
        row.peakReserved = run.peakReserved;
        row.headroom = static_cast<std::int64_t>(limit.bytes) - static_cast<std::int64_t>(run.peakReserved);
        row.oomAtLow = row.oom;
        row.oomAtHigh = row.oom;
        if (limit.isInterval()) {
            row.oomAtLow = limit.low == limit.bytes ? row.oom : runner.run(config, limit.low).oom;
            row.oomAtHigh = limit.high == limit.bytes ? row.oom : runner.run(config, limit.high).oom;
        }
        if (!row.holdsOverInterval() && row.oomAtLow) {
            // Smallest granule of the interval without an OOM (more room never adds one here).
            const std::uint64_t g = LimitInference::kGranule;
            std::uint64_t lo = limit.low / g;
            std::uint64_t hi = limit.high / g;  // no OOM at high
            while (lo + 1 < hi) {
                const std::uint64_t mid = lo + (hi - lo) / 2;
                if (runner.run(config, mid * g).oom) lo = mid; else hi = mid;
            }
            row.threshold = std::max(limit.low, hi * g);
        }
        const std::string where = row.oomOp ? " at op " + std::to_string(*row.oomOp) : std::string();
        if (!limit.isInterval()) {
            row.verdict = row.oom ? "OOM" + where : "no OOM, " + formatSize(row.headroom > 0 ? row.headroom : 0) + " to spare";
        } else if (row.holdsOverInterval()) {
            row.verdict = row.oom ? "OOM at every limit in the interval" : "no OOM at any limit in the interval";
        } else if (row.threshold) {
            row.verdict = "OOMs below " + formatSize(*row.threshold);
        } else {
            row.verdict = "OOMs above " + formatSize(limit.low) + " only";  // a non-monotone config (gc)
        }
        if (run.modelled) row.verdict += " (modelled: cudaMallocAsync keeps no segments)";
        answer.whatIf.push_back(std::move(row));
    }
}

std::string headline(const OomAnswer& answer) {
    const OomWhatIfRow* recordedRow = nullptr;
    const OomWhatIfRow* avoids = nullptr;
    for (const OomWhatIfRow& row : answer.whatIf) {
        if (row.recorded && !recordedRow) recordedRow = &row;
        // The cudaMallocAsync row is a fitted model's: not an answer to give first.
        if (row.recorded || row.oom || row.config == "backend:cudaMallocAsync") continue;
        // The seed question first: expandable segments, when it avoids it, else the simplest that does.
        if (!avoids || (row.config == "expandable_segments:True" && avoids->config != "expandable_segments:True")) avoids = &row;
    }
    std::string out;
    if (avoids) {
        out = "yes: " + avoids->config + " would have avoided this OOM (peak reserved " + formatSize(avoids->peakReserved) +
              " under the " + formatSize(answer.limit.bytes) + " limit)";
        if (answer.limit.isInterval()) {
            out += avoids->holdsOverInterval() ? ", at any limit in the inferred interval" : "; " + avoids->verdict;
        }
    } else {
        out = "no: none of the " + std::to_string(answer.whatIf.size()) + " configs tried avoids this OOM under the " +
              formatSize(answer.limit.bytes) + " limit";
        bool depends = false;
        for (const OomWhatIfRow& row : answer.whatIf) depends = depends || !row.holdsOverInterval();
        if (depends) out += " (some would at a higher limit in the interval: see the table)";
    }
    if (recordedRow && !recordedRow->oom) {
        out += "; note: the replay of the recorded config does not OOM at this limit (it does not reproduce the "
               "recording here)";
    }
    return out;
}

}  // namespace

std::optional<std::size_t> OomAnalyzer::firstOom(const RecordedTrace& trace) {
    SpillArray<RecordedEntry>::Walk walk(trace.entries);
    for (std::size_t i = 0; i < trace.entries.size(); ++i) {
        walk.at(i);
        if (trace.entries[i].action == EventAction::Oom) return i;
    }
    return std::nullopt;
}

OomAnswer OomAnalyzer::analyze(const RecordedTrace& trace, const AllocatorConfig& recorded, const MemoryLimit& limit,
                               const Program& program) {
    const std::optional<std::size_t> entry = firstOom(trace);
    if (!entry) throw std::invalid_argument("the recording has no OOM");
    OomAnswer answer;
    answer.limit = limit;
    answer.entryIndex = *entry;
    answer.device = trace.device;
    const RecordedEntry& e = trace.entries.at(*entry);
    answer.stream = trace.stream(e);
    answer.requested = e.size;
    answer.deviceFree = e.address;
    answer.allocSize = LimitInference::allocationSize(e.size);

    const RecordedTrace cut = prefix(trace, *entry);
    ReplayOptions options;
    options.config = recorded;
    options.keepOps = false;
    LimitInference::apply(limit, options);
    const ReplayResult replayed = TraceReplayer::replay(cut, options);
    answer.opIndex = limit.oomOp.value_or(0);
    if (!replayed.recordedOoms.empty() && replayed.recordedOoms.back().entryIndex == *entry) {
        const RecordedOomOutcome& outcome = replayed.recordedOoms.back();
        answer.opIndex = outcome.opIndex;
        if (outcome.reproduced) {
            answer.pytorchMessage = outcome.oom.message;
            answer.allocSize = outcome.oom.allocSize;
        }
    }
    const PoolKind pool = e.size <= kSmallSize ? PoolKind::Small : PoolKind::Large;
    std::uint64_t poolFree = 0;
    std::vector<OomHolder> holders;
    for (const SegmentInfo& s : replayed.segments) {
        answer.reserved += s.totalSize;
        answer.allocated += s.allocatedSize;
        for (const BlockInfo& b : s.blocks) {
            if (b.state == BlockState::Inactive && s.pool == pool) {
                answer.largestFree = std::max(answer.largestFree, b.size);
                poolFree += b.size;
            }
            if (b.state != BlockState::ActiveAllocated) continue;
            holders.push_back({b.address, b.size, b.requestedSize, s.stream, s.address, framesOf(trace.stacks, b.stackId)});
        }
    }
    answer.cachedFree = answer.reserved - std::min(answer.reserved, answer.allocated);
    // Enough free cached bytes in the request's pool, but in no single block large enough.
    answer.fragmented = poolFree >= answer.requested && answer.largestFree < answer.requested;
    answer.holderCount = holders.size();
    std::stable_sort(holders.begin(), holders.end(), [](const OomHolder& a, const OomHolder& b) { return a.size > b.size; });
    if (holders.size() > kMaxHolders) holders.resize(kMaxHolders);
    answer.holders = std::move(holders);

    whatIf(answer, trace, program, recorded);
    answer.headline = headline(answer);
    return answer;
}

}  // namespace allocscope::alloc
