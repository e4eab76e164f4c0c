#pragma once
// Random operation streams for the property tests and the soak run: per option family, a
// deterministic stream (from a seed) of mallocs on several streams, frees, record_stream,
// pending frees completed later, synchronize, empty_cache, fraction changes, resets and
// snapshots, with the InvariantChecker after every operation. No Qt: the soak binary uses it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "allocator/config/AllocatorConfig.h"
#include "allocator/core/CachingAllocator.h"
#include "allocator/core/EventSink.h"
#include "allocator/core/InvariantChecker.h"
#include "allocator/device/SimulatedDevice.h"

namespace allocscope::alloc::testing {

struct PropertyFamily {
    std::string name;
    AllocatorConfig config;
    std::uint64_t deviceTotal = 2ull << 30;
    std::vector<double> fractions;  // fraction changes drawn from these (1.0 = remove the cap)
};

inline std::vector<PropertyFamily> propertyFamilies() {
    constexpr std::uint64_t mib = 1ull << 20;
    std::vector<PropertyFamily> families;
    const std::vector<double> anyFraction = {0.3, 0.6, 0.9, 1.0};
    families.push_back({"default", AllocatorConfig{}, 2ull << 30, anyFraction});
    AllocatorConfig expandable;
    expandable.expandableSegments = true;
    families.push_back({"expandable_segments", expandable, 2ull << 30, anyFraction});
    AllocatorConfig maxSplit;
    maxSplit.maxSplitSize = 40 * mib;
    families.push_back({"max_split_size_mb", maxSplit, 2ull << 30, anyFraction});
    AllocatorConfig roundupSingle;
    roundupSingle.roundupPower2Divisions.fill(4);
    families.push_back({"roundup_single", roundupSingle, 2ull << 30, anyFraction});
    AllocatorConfig roundupList;  // [2:2,8:4,>:8]: < 4 MiB -> 2, [8,16) MiB -> 4, >= 16 MiB -> 8
    roundupList.roundupPower2Divisions[0] = 2;
    roundupList.roundupPower2Divisions[1] = 2;
    roundupList.roundupPower2Divisions[3] = 4;
    for (std::size_t i = 4; i < 16; ++i) roundupList.roundupPower2Divisions[i] = 8;
    families.push_back({"roundup_list", roundupList, 2ull << 30, anyFraction});
    AllocatorConfig gc;
    gc.garbageCollectionThreshold = 0.6;
    gc.perProcessMemoryFraction = 0.7;
    gc.maxSplitSize = 64 * mib;
    families.push_back({"gc_threshold_fraction", gc, 2ull << 30, {0.5, 0.7, 0.9}});
    AllocatorConfig fraction;
    fraction.perProcessMemoryFraction = 0.5;
    families.push_back({"fraction", fraction, 2ull << 30, {0.25, 0.5, 0.75}});
    AllocatorConfig segments;
    segments.largeSegmentSize = 40 * mib;
    segments.maxNonSplitRounding = 60 * mib;
    segments.maxSplitSize = 80 * mib;
    families.push_back({"large_segment_size_non_split_rounding", segments, 2ull << 30, anyFraction});
    return families;
}

class RandomOpDriver {
public:
    RandomOpDriver(const PropertyFamily& family, std::uint64_t seed)
        : family_(family),
          device_(family.deviceTotal, 0),
          checker_(family.config.maxSplitSize),
          state_(seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull) {
        tee_.add(&checker_);
        tee_.add(&counts_);
        allocator_ = std::make_unique<CachingAllocator>(family.config, device_, &tee_);
        fraction_ = family.config.perProcessMemoryFraction.value_or(1.0);
    }

    // Runs `ops` operations; returns "" or the first failure (op number, what, a dump).
    std::string run(std::uint64_t ops, bool checkEveryOp = true) {
        for (std::uint64_t i = 0; i < ops; ++i) {
            allocator_->setOpIndex(opCount_);
            std::string error = step();
            if (error.empty() && (checkEveryOp || i + 1 == ops)) error = checker_.check(*allocator_);
            ++opCount_;
            if (!error.empty()) {
                return "family " + family_.name + ", op " + std::to_string(opCount_ - 1) + " (" + lastOp_ +
                       "): " + error + "\n" + allocator_->debugDump();
            }
        }
        return {};
    }
    std::uint64_t ooms() const { return ooms_; }
    // Events seen, per action, over the whole run (resets do not clear these).
    const CountingSink& eventCounts() const { return counts_; }
    const CachingAllocator& allocator() const { return *allocator_; }

private:
    struct Live {
        std::uint64_t address;
        StreamId stream;
    };

    std::uint64_t next() {
        state_ ^= state_ << 13;
        state_ ^= state_ >> 7;
        state_ ^= state_ << 17;
        return state_;
    }
    double uniform() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }
    std::uint64_t below(std::uint64_t n) { return next() % n; }

    std::uint64_t drawSize() {
        const double r = uniform();
        auto logUniform = [this](double lo, double hi) {
            return static_cast<std::uint64_t>(std::exp(std::log(lo) + uniform() * (std::log(hi) - std::log(lo))));
        };
        if (r < 0.5) return logUniform(1, 1 << 20);
        if (r < 0.85) return logUniform(1 << 20, 20 << 20);
        if (r < 0.97) return logUniform(20 << 20, 128 << 20);
        return logUniform(128 << 20, 700 << 20);
    }
    StreamId drawStream() {
        const std::uint64_t r = below(10);
        return r < 6 ? 0 : (r < 8 ? 1 : (r < 9 ? 2 : 3));
    }

    std::string step() {
        const double r = uniform();
        if (r < 0.45 || live_.empty()) {
            if (live_.size() >= kMaxLive) return doFree();
            return doAlloc();
        }
        if (r < 0.80) return doFree();
        if (r < 0.86) {
            Live& tensor = live_[below(live_.size())];
            const StreamId stream = below(4);
            lastOp_ = "record_stream";
            if (!allocator_->recordStream(tensor.address, stream)) return "record_stream refused a live tensor";
            return {};
        }
        if (r < 0.92) {
            lastOp_ = "complete_pending";
            if (pending_.empty()) return {};
            const std::size_t index = below(pending_.size());
            const std::uint64_t address = pending_[index];
            pending_[index] = pending_.back();
            pending_.pop_back();
            if (allocator_->isPendingFree(address) && !allocator_->completePendingFree(address)) {
                return "completePendingFree refused a pending block";
            }
            return {};
        }
        if (r < 0.93) {
            lastOp_ = "synchronize";
            allocator_->synchronize();
            pending_.clear();
            return {};
        }
        if (r < 0.936) {
            lastOp_ = "empty_cache";
            allocator_->emptyCache();
            pending_.clear();
            return {};
        }
        if (r < 0.94) {
            lastOp_ = "set_memory_fraction";
            fraction_ = family_.fractions[below(family_.fractions.size())];
            allocator_->setMemoryFraction(fraction_);
            return {};
        }
        if (r < 0.942) {
            lastOp_ = "reset_peak";
            allocator_->resetPeakStats();
            checker_.noteResetPeak();
            return {};
        }
        if (r < 0.943) {
            lastOp_ = "reset_accumulated";
            allocator_->resetAccumulatedStats();
            checker_.noteResetAccumulated(*allocator_);
            return {};
        }
        if (r < 0.945) {
            lastOp_ = "segments";
            const auto segments = allocator_->segments();
            for (std::size_t i = 1; i < segments.size(); ++i) {
                if (segments[i - 1].address + segments[i - 1].totalSize > segments[i].address) {
                    return "snapshot segments overlap or are unsorted";
                }
            }
            return {};
        }
        return doFree();
    }

    std::string doAlloc() {
        const std::uint64_t size = drawSize();
        const StreamId stream = drawStream();
        lastOp_ = "alloc " + std::to_string(size) + " on stream " + std::to_string(stream);
        const std::optional<std::uint64_t> address = allocator_->malloc(size, stream);
        if (!address) {
            ++ooms_;
            const OomInfo& oom = allocator_->lastOom();
            if (oom.roundedSize != allocator_->roundSize(size)) return "OOM reports the wrong rounded size";
            // An OOM is legitimate only if the segment could not be had (cap or device).
            const auto reserved = static_cast<std::uint64_t>(allocator_->stats().reserved_bytes[0].current);
            const double fraction = fraction_;  // the cap as last set
            const bool capped = fraction < 1.0 &&
                                reserved + oom.allocSize >
                                    static_cast<std::uint64_t>(fraction * static_cast<double>(family_.deviceTotal));
            if (!capped && !family_.config.expandableSegments && device_.freeMemory() >= oom.allocSize) {
                return "OOM although the device had room for the segment";
            }
            return {};
        }
        for (const Live& tensor : live_) {
            if (tensor.address == *address) return "malloc returned a live address";
        }
        live_.push_back({*address, stream});
        return {};
    }
    std::string doFree() {
        if (live_.empty()) return {};
        const std::size_t index = below(live_.size());
        const std::uint64_t address = live_[index].address;
        live_[index] = live_.back();
        live_.pop_back();
        lastOp_ = "free";
        if (!allocator_->free(address)) return "free refused a live tensor";
        if (allocator_->isPendingFree(address)) pending_.push_back(address);
        return {};
    }

    static constexpr std::size_t kMaxLive = 48;
    PropertyFamily family_;
    SimulatedDevice device_;
    InvariantChecker checker_;
    CountingSink counts_;
    TeeSink tee_;
    std::unique_ptr<CachingAllocator> allocator_;
    std::uint64_t state_;
    std::uint64_t opCount_ = 0;
    std::uint64_t ooms_ = 0;
    std::vector<Live> live_;
    std::vector<std::uint64_t> pending_;
    std::string lastOp_;
    double fraction_ = 1.0;
};

}  // namespace allocscope::alloc::testing
