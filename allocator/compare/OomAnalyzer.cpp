#include "allocator/compare/OomAnalyzer.h"

#include <algorithm>
#include <stdexcept>

#include "allocator/compare/ComparisonEngine.h"
#include "allocator/compare/Recommender.h"
#include "allocator/config/ConfigParser.h"
#include "allocator/core/CachingAllocator.h"
#include "allocator/core/FormatSize.h"
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

CompareDevice deviceOf(const MemoryLimit& limit) {
    CompareDevice d;
    d.name = limit.deviceName;
    d.totalMemory = limit.totalMemory;
    d.otherMemory = limit.otherMemory;
    d.memoryFraction = limit.memoryFraction;
    return d;
}

bool oomsAt(const Program& program, const CompareConfig& config, const MemoryLimit& limit, std::uint64_t bytes) {
    return ComparisonEngine::runOne(program, config, deviceOf(limit.at(bytes))).oom();
}

std::vector<std::string> framesOf(const StackTable& stacks, std::uint32_t id) {
    std::vector<std::string> out;
    if (id == 0 || id >= stacks.size()) return out;
    for (const Frame& f : stacks.stack(id)) out.push_back(f.filename + ":" + std::to_string(f.line) + ":" + f.name);
    return out;
}

void whatIf(OomAnswer& answer, const Program& program, const AllocatorConfig& recorded) {
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
    for (const CompareConfig& config : configs) {
        OomWhatIfRow row;
        row.config = config.label;
        row.recorded = config.config == recorded;
        const RunMetrics run = ComparisonEngine::runOne(program, config, deviceOf(limit));
        row.oom = run.oom();
        if (row.oom) row.oomOp = run.ooms.front().opIndex;
        row.peakReserved = run.peakReserved;
        row.headroom = static_cast<std::int64_t>(limit.bytes) - static_cast<std::int64_t>(run.peakReserved);
        row.oomAtLow = row.oom;
        row.oomAtHigh = row.oom;
        if (limit.isInterval()) {
            row.oomAtLow = limit.low == limit.bytes ? row.oom : oomsAt(program, config, limit, limit.low);
            row.oomAtHigh = limit.high == limit.bytes ? row.oom : oomsAt(program, config, limit, limit.high);
        }
        if (!row.holdsOverInterval() && row.oomAtLow) {
            // Smallest granule of the interval without an OOM (more room never adds one here).
            const std::uint64_t g = LimitInference::kGranule;
            std::uint64_t lo = limit.low / g;
            std::uint64_t hi = limit.high / g;  // no OOM at high
            while (lo + 1 < hi) {
                const std::uint64_t mid = lo + (hi - lo) / 2;
                if (oomsAt(program, config, limit, mid * g)) lo = mid; else hi = mid;
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
        // Its reserved bytes come from a fitted model (AsyncBackendModel.h), not from segments.
        if (run.asyncBackend) row.verdict += " (modelled: cudaMallocAsync keeps no segments)";
        answer.whatIf.push_back(std::move(row));
    }
}

std::string headline(const OomAnswer& answer) {
    const OomWhatIfRow* recordedRow = nullptr;
    const OomWhatIfRow* avoids = nullptr;
    for (const OomWhatIfRow& row : answer.whatIf) {
        if (row.recorded && !recordedRow) recordedRow = &row;
        if (row.recorded || row.oom) continue;
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
        std::uint64_t least = 0;
        for (const OomWhatIfRow& row : answer.whatIf) least = least == 0 ? row.peakReserved : std::min(least, row.peakReserved);
        out = "no: none of the " + std::to_string(answer.whatIf.size()) + " configs tried avoids this OOM under the " +
              formatSize(answer.limit.bytes) + " limit";
        bool depends = false;
        for (const OomWhatIfRow& row : answer.whatIf) depends = depends || !row.holdsOverInterval();
        if (depends) out += " (some would at a higher limit in the interval: see the table)";
    }
    if (recordedRow && !recordedRow->oom) {
        out += "; note: the simulated run of the recorded config does not OOM here either (its new segments are placed "
               "by the simulated device, not at the recorded addresses)";
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

    whatIf(answer, program, recorded);
    answer.headline = headline(answer);
    return answer;
}

}  // namespace allocscope::alloc
