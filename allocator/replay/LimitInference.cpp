#include "allocator/replay/LimitInference.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "allocator/core/CachingAllocator.h"
#include "allocator/core/FormatSize.h"

namespace allocscope::alloc {
namespace {

constexpr std::uint64_t kG = LimitInference::kGranule;

// Where a replay under one limit lands against the recorded OOM.
enum class Fit { TooSmall, Fits, TooLarge };

struct FirstOom {
    std::size_t entry = 0;
    std::uint64_t deviceFree = 0;
    std::uint64_t size = 0;
};

std::optional<FirstOom> firstOomEntry(const RecordedTrace& trace) {
    SpillArray<RecordedEntry>::Walk walk(trace.entries);
    for (std::size_t i = 0; i < trace.entries.size(); ++i) {
        walk.at(i);
        const RecordedEntry& e = trace.entries[i];
        if (e.action == EventAction::Oom) return FirstOom{i, e.address, e.size};
    }
    return std::nullopt;
}

// The device fields for `limit` bytes. A fraction: the total leaves the driver `deviceFree`
// bytes beyond the limit, so the device never binds first. The device: what others hold leaves
// the allocator exactly `limit`.
void deviceFor(MemoryLimit& m, std::uint64_t limit) {
    m.bytes = limit;
    if (m.cause == MemoryLimit::Cause::MemoryFraction) {
        // allowed_memory_maximum = (size_t)(fraction * total): half a byte above keeps the
        // truncation on `limit` whatever the rounding of the product.
        if (!m.memoryFraction || static_cast<std::uint64_t>(*m.memoryFraction * static_cast<double>(m.totalMemory)) != limit) {
            m.memoryFraction = (static_cast<double>(limit) + 0.5) / static_cast<double>(m.totalMemory);
        }
    } else {
        m.memoryFraction.reset();
        m.otherMemory = m.totalMemory - limit;
    }
}

// garbage_collect_cached_blocks runs once total_allocated_memory, a whole number of granules,
// exceeds (size_t)(threshold * allowed_memory_maximum): it decides by how many granules that
// product holds, which changes at most once inside a granule of limits (threshold < 1). The
// limit in (start, start + granule) where it changes, if any.
std::optional<std::uint64_t> gcStepInside(double threshold, std::uint64_t start) {
    auto granules = [threshold](std::uint64_t limit) {
        return static_cast<std::uint64_t>(threshold * static_cast<double>(limit)) / kG;
    };
    const std::uint64_t last = start + kG - 1;
    if (granules(start) == granules(last)) return std::nullopt;
    std::uint64_t lo = start + 1;  // the smallest limit that reaches granules(last)
    std::uint64_t hi = last;
    while (lo < hi) {
        const std::uint64_t mid = lo + (hi - lo) / 2;
        if (granules(mid) == granules(last)) hi = mid; else lo = mid + 1;
    }
    return lo;
}

// A process holds more than the CUDA context outside PyTorch (kernels loaded lazily, library
// handles: gpt2_frac_oom on the H200 held 224 MiB more), so the device may be larger than
// device_free implies with the context alone, by up to this.
constexpr std::uint64_t kMaxExtraOtherMemory = 1ull << 30;

struct RoundFraction {
    double fraction = 0.0;
    std::uint64_t allowed = 0;  // (size_t)(fraction * total)
    std::uint64_t total = 0;
};

// The roundest fraction with `digits` decimals whose allowed maximum lies in [low, high]: of the
// `implied` total, else of a larger one (up to kMaxExtraOtherMemory more). A multiple of 5 in the
// last decimal first (people write 0.025 and 0.045), then the nearest the interval's middle (of a
// larger total: the one that brings it nearest).
std::optional<RoundFraction> roundestFraction(std::uint64_t low, std::uint64_t high, std::uint64_t implied, int digits) {
    const double scale = std::pow(10.0, digits);
    const double middle = (static_cast<double>(low) + static_cast<double>(high)) / 2.0;
    auto allowedOf = [](double f, std::uint64_t total) { return static_cast<std::uint64_t>(f * static_cast<double>(total)); };
    std::optional<RoundFraction> exact;
    std::optional<std::pair<int, double>> exactScore;
    std::optional<RoundFraction> grown;
    std::optional<std::pair<int, double>> grownScore;
    const double largest = static_cast<double>(implied + kMaxExtraOtherMemory);
    const auto first = static_cast<std::int64_t>(std::ceil(static_cast<double>(low) / largest * scale));
    const auto last = static_cast<std::int64_t>(std::floor(static_cast<double>(high) / static_cast<double>(implied) * scale));
    for (std::int64_t k = std::max<std::int64_t>(first - 1, 1); k <= last + 1 && k < static_cast<std::int64_t>(scale); ++k) {
        const double f = static_cast<double>(k) / scale;
        const int notFive = k % 5 == 0 ? 0 : 1;
        const std::uint64_t allowed = allowedOf(f, implied);
        if (allowed >= low && allowed <= high) {
            const std::pair<int, double> score{notFive, std::abs(static_cast<double>(allowed) - middle)};
            if (!exactScore || score < *exactScore) {
                exactScore = score;
                exact = RoundFraction{f, allowed, implied};
            }
            continue;
        }
        if (allowed > high) continue;
        auto total = static_cast<std::uint64_t>(std::ceil(static_cast<double>(low) / f));
        while (total > implied && allowedOf(f, total - 1) >= low) --total;
        while (allowedOf(f, total) < low) ++total;
        if (total > implied + kMaxExtraOtherMemory || allowedOf(f, total) > high) continue;
        // Towards the middle of the interval, as far as the growth allows.
        const auto towardsMiddle = static_cast<std::uint64_t>(middle / f);
        if (towardsMiddle > total) {
            total = std::min(towardsMiddle, implied + kMaxExtraOtherMemory);
            while (allowedOf(f, total) > high) --total;
        }
        const std::pair<int, double> score{notFive, std::abs(static_cast<double>(allowedOf(f, total)) - middle)};
        if (!grownScore || score < *grownScore) {
            grownScore = score;
            grown = RoundFraction{f, allowedOf(f, total), total};
        }
    }
    return exact ? exact : grown;
}

}  // namespace

std::uint64_t LimitInference::allocationSize(std::uint64_t rounded) {
    if (rounded <= kSmallSize) return kSmallBuffer;
    if (rounded < kMinLargeAlloc) return 20 * kMiB;
    return (rounded + kG - 1) / kG * kG;
}

std::uint64_t LimitInference::recordedPeakReserved(const RecordedTrace& trace) {
    std::uint64_t reserved = 0;
    std::uint64_t peak = 0;
    SpillArray<RecordedEntry>::Walk walk(trace.entries);
    for (std::size_t i = 0; i < trace.entries.size(); ++i) {
        walk.at(i);
        const RecordedEntry& e = trace.entries[i];
        if (e.action == EventAction::Oom) break;
        if (e.action == EventAction::SegmentAlloc || e.action == EventAction::SegmentMap) reserved += e.size;
        if (e.action == EventAction::SegmentFree || e.action == EventAction::SegmentUnmap) reserved -= std::min(reserved, e.size);
        peak = std::max(peak, reserved);
    }
    return peak;
}

MemoryLimit LimitInference::given(const RecordedTrace& trace, const LimitDevice& device) {
    MemoryLimit m;
    m.source = MemoryLimit::Source::Explicit;
    m.deviceName = device.name;
    m.totalMemory = device.totalMemory;
    m.otherMemory = device.otherMemory;
    m.memoryFraction = device.memoryFraction;
    const std::uint64_t room = device.totalMemory > device.otherMemory ? device.totalMemory - device.otherMemory : 0;
    if (device.memoryFraction && *device.memoryFraction < 1.0) {
        m.cause = MemoryLimit::Cause::MemoryFraction;
        m.bytes = std::min(room, static_cast<std::uint64_t>(*device.memoryFraction * static_cast<double>(device.totalMemory)));
    } else {
        m.bytes = room;
    }
    m.peakReserved = recordedPeakReserved(trace);
    m.low = m.peakReserved;
    m.high = m.bytes;
    if (const std::optional<FirstOom> oom = firstOomEntry(trace)) {
        m.oomEntry = oom->entry;
        m.deviceFree = oom->deviceFree;
        m.requested = oom->size;
    }
    return m;
}

void LimitInference::apply(const MemoryLimit& limit, ReplayOptions& options) {
    options.totalMemory = limit.totalMemory;
    options.otherMemory = limit.otherMemory;
    options.memoryFraction = limit.memoryFraction;
}

MemoryLimit LimitInference::infer(const RecordedTrace& trace, const ReplayOptions& base, const LimitDevice& fallback) {
    MemoryLimit m = given(trace, fallback);
    const std::optional<FirstOom> oom = firstOomEntry(trace);
    if (!oom) {
        m.source = MemoryLimit::Source::Preset;
        return m;
    }
    m.cause = oom->deviceFree < allocationSize(oom->size) ? MemoryLimit::Cause::DeviceFull : MemoryLimit::Cause::MemoryFraction;

    ReplayOptions probe = base;
    probe.sink = nullptr;
    probe.afterStep = nullptr;
    probe.onPhase = nullptr;
    probe.keepOps = false;
    probe.continueAfterOom = false;  // a replay that fails before the OOM has said enough
    probe.expected = nullptr;

    // The probe's device: the same shape at every limit, wide enough never to bind otherwise.
    MemoryLimit shape = m;
    shape.deviceName = "custom";
    auto deviceAt = [&](std::uint64_t limit) {
        MemoryLimit d = shape;
        if (d.cause == MemoryLimit::Cause::MemoryFraction) {
            d.totalMemory = limit + oom->deviceFree + fallback.otherMemory;
            d.otherMemory = fallback.otherMemory;
            d.memoryFraction.reset();
        } else {
            d.totalMemory = std::max(fallback.totalMemory, limit + fallback.otherMemory);
        }
        deviceFor(d, limit);
        return d;
    };
    std::optional<RecordedOomOutcome> fitted;  // the first Fits probe's failure
    // The most the recorded device can free, when a probe's replay had to move to a smaller device
    // (its expandable reservations, 9/8 of the total each, bound the total: TraceReplayer). Above
    // it no limit exists, so an OOM that still fails there bounds the interval by the device.
    std::optional<std::uint64_t> deviceRoom;
    std::optional<ReplayDivergence> otherDivergence;  // a loose probe's divergence before the OOM
    // Strict: the replay reproduces the recording up to and including the OOM. Loose (when no
    // limit does, e.g. addresses that the replay places elsewhere from the first segment on): the
    // OOMs alone, none earlier than recorded and the recorded one failing again.
    auto classify = [&](std::uint64_t limit, bool strict) {
        apply(deviceAt(limit), probe);
        const ReplayResult r = TraceReplayer::replay(trace, probe);
        if (r.totalMemory < probe.totalMemory) {
            const std::uint64_t room = r.totalMemory - std::min(r.totalMemory, r.otherMemory);
            deviceRoom = deviceRoom ? std::min(*deviceRoom, room) : room;
        }
        // The private pools the first probe's inference found are kept for the others: a probe
        // that does not reproduce the recording would otherwise search pool guesses in vain.
        if (!probe.poolAssignments) probe.poolAssignments = r.poolAssignments;
        const auto first = std::find_if(r.recordedOoms.begin(), r.recordedOoms.end(),
                                        [&](const RecordedOomOutcome& o) { return o.entryIndex == oom->entry; });
        // The recording released memory where the replay kept it, before the OOM: the recording
        // ran under a smaller limit (its garbage collection or oversize release ran first).
        if (strict && r.divergence && r.divergence->pressure == MemoryPressure::Lower &&
            (first == r.recordedOoms.end() || r.divergence->opIndex <= first->opIndex)) {
            return Fit::TooLarge;
        }
        if (first == r.recordedOoms.end()) return Fit::TooSmall;  // stopped (or diverged) before it
        std::uint64_t problem = std::numeric_limits<std::uint64_t>::max();
        if (r.divergence && strict) problem = r.divergence->opIndex;
        if (r.unexpectedOomOp) problem = std::min(problem, *r.unexpectedOomOp);
        if (first->reproduced) {
            if (problem <= first->opIndex) return Fit::TooSmall;
            if (!fitted) fitted = *first;
            if (!strict && r.divergence && r.divergence->opIndex < first->opIndex) otherDivergence = r.divergence;
            return Fit::Fits;
        }
        return problem < first->opIndex ? Fit::TooSmall : Fit::TooLarge;
    };

    // An upper end that is too large: the recorded peak plus the failed segment, doubled until the
    // OOM vanishes (at most 2^50 bytes: no device is that large).
    const std::uint64_t request = allocationSize(oom->size);
    std::uint64_t upper = (m.peakReserved + request) / kG + 1;
    Fit atUpper = classify(upper * kG, false);
    while (atUpper != Fit::TooLarge && upper < (1ull << 50) / kG) {
        upper *= 2;
        atUpper = classify(upper * kG, false);
    }
    m.oomOp.reset();
    m.oomEntry = oom->entry;
    m.deviceFree = oom->deviceFree;
    m.requested = oom->size;
    // The OOM fails even on the largest device the recording allows: the device bounds the
    // interval from above (the first granule past its room counts as too large).
    const bool deviceBound = atUpper != Fit::TooLarge && deviceRoom && *deviceRoom / kG + 1 < upper;
    if (deviceBound) upper = *deviceRoom / kG + 1;
    if (atUpper != Fit::TooLarge && !deviceBound) {
        m.source = MemoryLimit::Source::Unreproduced;
        m.pick = "no limit makes the OOM vanish";
        return m;
    }
    // garbage_collection_threshold's decision changes inside a granule (gcStepInside): under a
    // fraction, the interval's ends are moved to where it does.
    const double gcThreshold = m.cause == MemoryLimit::Cause::MemoryFraction ? base.config.garbageCollectionThreshold : 0.0;
    // Smallest granule that is not too small, then smallest that is too large, as the first and
    // last limit that fit; nullopt when the granule found is not one that fits.
    auto search = [&](bool strict) -> std::optional<std::pair<std::uint64_t, std::uint64_t>> {
        std::uint64_t lo = 0;
        std::uint64_t hi = upper;  // classify(hi) is not TooSmall (loosely; strictly perhaps not)
        while (lo < hi) {
            const std::uint64_t mid = lo + (hi - lo) / 2;
            if (classify(mid * kG, strict) == Fit::TooSmall) lo = mid + 1; else hi = mid;
        }
        const std::uint64_t lowK = lo;
        hi = upper;  // classify(hi) is TooLarge, or past the device's room
        if (deviceBound) lo = hi;
        while (lo < hi) {
            const std::uint64_t mid = lo + (hi - lo) / 2;
            if (classify(mid * kG, strict) == Fit::TooLarge) hi = mid; else lo = mid + 1;
        }
        fitted.reset();
        otherDivergence.reset();
        if (lo <= lowK || classify(lowK * kG, strict) != Fit::Fits) return std::nullopt;
        std::uint64_t low = lowK * kG;
        std::uint64_t high = lo * kG - 1;  // every limit below the first too-large granule
        if (gcThreshold > 0.0) {
            if (lowK > 0) {
                const std::optional<std::uint64_t> below = gcStepInside(gcThreshold, low - kG);
                if (below && classify(*below, strict) == Fit::Fits) low = *below;
            }
            const std::optional<std::uint64_t> top = gcStepInside(gcThreshold, high + 1 - kG);
            if (top && classify(*top, strict) != Fit::Fits) high = *top - 1;
        }
        return std::make_pair(low, high);
    };
    std::optional<std::pair<std::uint64_t, std::uint64_t>> found = search(true);
    const bool loose = !found;
    if (loose) found = search(false);
    if (!found) {
        m.source = MemoryLimit::Source::Unreproduced;
        m.pick = "no limit reproduces the recording up to its OOM";
        return m;
    }
    const auto [low, high] = *found;
    // Honest about a loose interval: the replay does not reproduce what came before the OOM.
    std::string caveat;
    if (loose) {
        caveat = "; the interval is bounded by the OOMs alone: the replay leaves the recording before the OOM for "
                 "another reason";
        if (otherDivergence) caveat += " (first at op " + std::to_string(otherDivergence->opIndex) + ": " + otherDivergence->what + ")";
    }
    if (deviceBound) {
        caveat += "; its upper end is the most the recorded device could free (its expandable reservations bound its "
                  "size), where the OOM still fails";
    }
    m.source = MemoryLimit::Source::Inferred;
    m.low = low;
    m.high = high;
    m.oomOp = fitted->opIndex;
    const std::uint64_t reservedAtFailure = fitted->reserved;

    m.deviceName = "custom";
    m.memoryFraction.reset();
    if (m.cause == MemoryLimit::Cause::DeviceFull) {
        // cudaMemGetInfo after the release of every cached block: the limit is what the
        // allocator held then plus what the driver still had.
        m.totalMemory = std::max(fallback.totalMemory, m.high + fallback.otherMemory);
        const std::uint64_t point = reservedAtFailure + oom->deviceFree;
        if (point >= m.low && point <= m.high) {
            deviceFor(m, point);
            m.pick = "reserved at the failure (" + formatSize(reservedAtFailure) + ") + device_free (" + formatSize(oom->deviceFree) + ")";
        } else {
            deviceFor(m, std::clamp(point, m.low, m.high));
            m.pick = "reserved + device_free (" + formatSize(point) + ") is outside it: its nearest end";
        }
        m.pick += caveat;
        return m;
    }
    // A fraction of the device the driver describes: what the allocator held, what was free, and
    // the CUDA context the fallback preset assumes.
    m.totalMemory = reservedAtFailure + oom->deviceFree + fallback.otherMemory;
    m.otherMemory = fallback.otherMemory;
    const std::uint64_t implied = m.totalMemory;
    std::optional<RoundFraction> round;
    for (int digits = 1; digits <= 4 && !round; ++digits) round = roundestFraction(m.low, m.high, implied, digits);
    if (round) {
        m.memoryFraction = round->fraction;
        m.bytes = round->allowed;
        m.totalMemory = round->total;
        m.otherMemory += round->total - implied;  // device_free at the OOM stays the recorded one
    }
    if (round && round->total == implied) {
        m.pick = "the roundest fraction in it, of the " + formatSize(implied) + " device_free implies";
    } else if (round) {
        m.pick = "the roundest fraction in it, of a device " + formatSize(round->total - implied) + " larger than the " +
                 formatSize(implied) + " device_free implies with the CUDA context alone (memory the process holds "
                 "outside PyTorch beyond it)";
    } else {
        deviceFor(m, m.low + (m.high - m.low) / 2 / kG * kG);
        m.pick = "its middle (no round fraction of the " + formatSize(m.totalMemory) + " device_free implies falls in it)";
    }
    m.pick += caveat;
    return m;
}

}  // namespace allocscope::alloc
