#pragma once
// A GPU in memory: total memory, what other processes (and the CUDA context) hold, and where
// new segments and expandable reservations land. Addresses matter: best fit breaks ties between
// equal-size blocks by address, so a replay must give each new segment the address the real
// driver gave it. An address oracle (set by the replay) answers that; without an answer the
// device's own placement policy decides.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "allocator/core/DeviceMemory.h"
#include "allocator/device/GpuPresets.h"

namespace allocscope::alloc {

struct PlacementRequest {
    enum class Kind : std::uint8_t { Segment, Reservation };
    Kind kind = Kind::Segment;
    std::uint64_t size = 0;      // segment size, or reservation size
    std::uint64_t pageSize = 0;  // Reservation: page size (2 MiB small, 20 MiB large)
    StreamId stream = 0;
};

// Returns the address for the request, or nullopt to let the device's placement decide.
using AddressOracle = std::function<std::optional<std::uint64_t>(const PlacementRequest&)>;

class SimulatedDevice final : public DeviceMemory {
public:
    SimulatedDevice(std::uint64_t totalMemory, std::uint64_t otherProcessMemory,
                    std::string name = "simulated GPU");
    explicit SimulatedDevice(const GpuPreset& preset);

    std::string name() const override { return name_; }
    std::uint64_t totalMemory() const override { return total_; }
    std::uint64_t freeMemory() const override;
    std::optional<std::uint64_t> allocateSegment(std::uint64_t size, StreamId stream) override;
    void freeSegment(std::uint64_t address, std::uint64_t size) override;
    std::optional<std::uint64_t> reserveAddressRange(std::uint64_t size, std::uint64_t pageSize,
                                                     StreamId stream) override;
    void releaseAddressRange(std::uint64_t base, std::uint64_t size) override;
    bool mapPages(std::uint64_t address, std::uint64_t size) override;
    void unmapPages(std::uint64_t address, std::uint64_t size) override;

    void setAddressOracle(AddressOracle oracle) { oracle_ = std::move(oracle); }
    // Memory held outside this allocator (the CUDA context, other processes).
    void setOtherProcessMemory(std::uint64_t bytes) { other_ = bytes; }
    std::uint64_t otherProcessMemory() const { return other_; }
    // Physical bytes this allocator holds: cudaMalloc'd segments plus mapped pages.
    std::uint64_t usedBytes() const { return used_; }
    // Live virtual ranges (segments and reservations), base -> size: for placement policies.
    const std::map<std::uint64_t, std::uint64_t>& liveRanges() const { return ranges_; }
    // The end of the highest page range mapped in [base, base + size); `base` when none is.
    std::uint64_t mappedEnd(std::uint64_t base, std::uint64_t size) const;

    // What NVML would report as this process's memory for the OOM message ("Including
    // non-PyTorch memory, this process has X memory in use."): the context memory given here
    // plus usedBytes(). Defaults to the whole otherProcessMemory; nullopt = no NVML (the OOM
    // message then has no process line).
    void setProcessContextMemory(std::optional<std::uint64_t> bytes) {
        processContext_ = bytes;
        processContextSet_ = true;
    }
    std::optional<std::uint64_t> processMemoryInUse() const;

    // Where the default placement puts cudaMalloc segments (first fit, 2 MiB aligned, upward)
    // and expandable reservations (a separate region above them).
    static constexpr std::uint64_t kSegmentBase = 0x7f0000000000ull;
    static constexpr std::uint64_t kReservationBase = 0x7f8000000000ull;
    static constexpr std::uint64_t kPlacementAlignment = 2ull * 1024 * 1024;

private:
    std::uint64_t place(const PlacementRequest& request);

    std::string name_;
    std::uint64_t total_ = 0;
    std::uint64_t other_ = 0;
    std::uint64_t used_ = 0;
    std::map<std::uint64_t, std::uint64_t> ranges_;
    AddressOracle oracle_;
    std::optional<std::uint64_t> processContext_;
    bool processContextSet_ = false;
    std::map<std::uint64_t, std::uint64_t> mapped_;  // mapped page ranges, base -> size
};

}  // namespace allocscope::alloc
