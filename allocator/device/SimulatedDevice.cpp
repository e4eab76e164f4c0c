#include "allocator/device/SimulatedDevice.h"


namespace allocscope::alloc {

SimulatedDevice::SimulatedDevice(std::uint64_t totalMemory, std::uint64_t otherProcessMemory, std::string name)
    : name_(std::move(name)), total_(totalMemory), other_(otherProcessMemory) {}

SimulatedDevice::SimulatedDevice(const GpuPreset& preset)
    : SimulatedDevice(preset.totalMemory, preset.contextMemory, preset.description) {}

std::uint64_t SimulatedDevice::freeMemory() const {
    const std::uint64_t held = other_ + used_;
    return held >= total_ ? 0 : total_ - held;
}

std::optional<std::uint64_t> SimulatedDevice::processMemoryInUse() const {
    if (!processContextSet_) return other_ + used_;
    if (!processContext_) return std::nullopt;
    return *processContext_ + used_;
}

std::optional<std::uint64_t> SimulatedDevice::allocateSegment(std::uint64_t size, StreamId stream) {
    if (size > freeMemory()) return std::nullopt;
    PlacementRequest request;
    request.kind = PlacementRequest::Kind::Segment;
    request.size = size;
    request.stream = stream;
    const std::uint64_t address = place(request);
    ranges_[address] = size;
    used_ += size;
    return address;
}

void SimulatedDevice::freeSegment(std::uint64_t address, std::uint64_t size) {
    auto it = ranges_.find(address);
    if (it == ranges_.end()) return;  // not ours: a real cudaFree would fail; keep accounting sane
    ranges_.erase(it);
    used_ -= size <= used_ ? size : used_;
}

std::optional<std::uint64_t> SimulatedDevice::reserveAddressRange(std::uint64_t size, std::uint64_t pageSize,
                                                                  StreamId stream) {
    PlacementRequest request;
    request.kind = PlacementRequest::Kind::Reservation;
    request.size = size;
    request.pageSize = pageSize;
    request.stream = stream;
    const std::uint64_t address = place(request);
    ranges_[address] = size;
    return address;
}

void SimulatedDevice::releaseAddressRange(std::uint64_t base, std::uint64_t size) {
    ranges_.erase(base);
    // Pages still mapped in the range go with it (the allocator unmaps first; this keeps the
    // accounting right if a caller does not).
    unmapPages(base, size);
}

bool SimulatedDevice::mapPages(std::uint64_t address, std::uint64_t size) {
    if (size > freeMemory()) return false;
    mapped_[address] = size;
    used_ += size;
    return true;
}

void SimulatedDevice::unmapPages(std::uint64_t address, std::uint64_t size) {
    // Unmapping may cover several earlier maps, or part of one: track by page range.
    const std::uint64_t end = address + size;
    auto it = mapped_.upper_bound(address);
    if (it != mapped_.begin()) --it;
    while (it != mapped_.end() && it->first < end) {
        const std::uint64_t rangeStart = it->first;
        const std::uint64_t rangeEnd = it->first + it->second;
        if (rangeEnd <= address) {
            ++it;
            continue;
        }
        it = mapped_.erase(it);
        if (rangeStart < address) mapped_[rangeStart] = address - rangeStart;
        if (rangeEnd > end) mapped_[end] = rangeEnd - end;
        const std::uint64_t overlap = (rangeEnd < end ? rangeEnd : end) - (rangeStart > address ? rangeStart : address);
        used_ -= overlap <= used_ ? overlap : used_;
        it = mapped_.lower_bound(rangeEnd < end ? rangeEnd : end);
    }
}

std::uint64_t SimulatedDevice::mappedEnd(std::uint64_t base, std::uint64_t size) const {
    auto it = mapped_.lower_bound(base + size);
    if (it == mapped_.begin()) return base;
    --it;
    const std::uint64_t end = it->first + it->second;
    return end <= base ? base : (end < base + size ? end : base + size);
}

// Lowest-address first fit in the request's region, 2 MiB aligned. The oracle (a replay's
// recorded addresses) wins when it answers.
std::uint64_t SimulatedDevice::place(const PlacementRequest& request) {
    if (oracle_) {
        if (const auto address = oracle_(request)) return *address;
    }
    const bool reservation = request.kind == PlacementRequest::Kind::Reservation;
    std::uint64_t candidate = reservation ? kReservationBase : kSegmentBase;
    const std::uint64_t limit = reservation ? ~0ull : kReservationBase;
    const std::uint64_t size = (request.size + kPlacementAlignment - 1) / kPlacementAlignment * kPlacementAlignment;
    auto it = ranges_.upper_bound(candidate);
    if (it != ranges_.begin()) --it;
    for (; it != ranges_.end() && it->first < limit; ++it) {
        if (it->first >= candidate + size) break;
        const std::uint64_t end = it->first + it->second;
        if (end > candidate) candidate = (end + kPlacementAlignment - 1) / kPlacementAlignment * kPlacementAlignment;
    }
    return candidate;
}

}  // namespace allocscope::alloc
