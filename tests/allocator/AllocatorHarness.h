#pragma once
// Shared fixture for the allocator suites: a simulated device, an allocator whose events go to
// a VectorSink and an InvariantChecker, and small helpers. Header-only, test code only.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "allocator/config/AllocatorConfig.h"
#include "allocator/core/CachingAllocator.h"
#include "allocator/core/EventSink.h"
#include "allocator/core/InvariantChecker.h"
#include "allocator/device/SimulatedDevice.h"

namespace allocscope::alloc::testing {

inline constexpr std::uint64_t KiB = 1024;
inline constexpr std::uint64_t MiB = 1024 * 1024;
inline constexpr std::uint64_t GiB = 1024 * MiB;
inline constexpr std::uint64_t kH100Total = 85'017'493'504ull;

struct Harness {
    explicit Harness(const AllocatorConfig& config = {}, std::uint64_t total = kH100Total, std::uint64_t other = 0)
        : device(total, other), checker(config.maxSplitSize) {
        tee.add(&events);
        tee.add(&checker);
        allocator = std::make_unique<CachingAllocator>(config, device, &tee);
    }
    // The block address, or 0 after an OOM.
    std::uint64_t alloc(std::uint64_t size, StreamId stream = 0) { return allocator->malloc(size, stream).value_or(0); }
    bool free(std::uint64_t address) { return allocator->free(address); }
    const DeviceStats& stats() const { return allocator->stats(); }
    std::string check() const { return checker.check(*allocator); }
    std::vector<Event> eventsOf(EventAction action) const {
        std::vector<Event> out;
        for (const Event& event : events.events) {
            if (event.action == action) out.push_back(event);
        }
        return out;
    }
    std::size_t mark() const { return events.events.size(); }
    std::vector<Event> since(std::size_t mark) const {
        return {events.events.begin() + static_cast<std::ptrdiff_t>(mark), events.events.end()};
    }

    SimulatedDevice device;
    VectorSink events;
    InvariantChecker checker;
    TeeSink tee;
    std::unique_ptr<CachingAllocator> allocator;
};

inline AllocatorConfig expandableConfig() {
    AllocatorConfig config;
    config.expandableSegments = true;
    return config;
}

inline AllocatorConfig maxSplitConfig(std::uint64_t mib) {
    AllocatorConfig config;
    config.maxSplitSize = mib * MiB;
    return config;
}

}  // namespace allocscope::alloc::testing
