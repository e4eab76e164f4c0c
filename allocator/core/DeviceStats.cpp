#include "allocator/core/DeviceStats.h"

#include <algorithm>

namespace allocscope::alloc {
namespace {

struct ArrayField {
    std::string_view name;
    StatArray DeviceStats::*member;
};
constexpr std::array<ArrayField, 9> kArrays = {{
    {"allocation", &DeviceStats::allocation},
    {"segment", &DeviceStats::segment},
    {"active", &DeviceStats::active},
    {"inactive_split", &DeviceStats::inactive_split},
    {"allocated_bytes", &DeviceStats::allocated_bytes},
    {"reserved_bytes", &DeviceStats::reserved_bytes},
    {"active_bytes", &DeviceStats::active_bytes},
    {"inactive_split_bytes", &DeviceStats::inactive_split_bytes},
    {"requested_bytes", &DeviceStats::requested_bytes},
}};
constexpr std::array<std::string_view, 3> kPoolNames = {"all", "small_pool", "large_pool"};

struct ScalarField {
    std::string_view name;
    std::int64_t DeviceStats::*member;
};
constexpr std::array<ScalarField, 6> kScalars = {{
    {"max_split_size", &DeviceStats::max_split_size},
    {"num_alloc_retries", &DeviceStats::num_alloc_retries},
    {"num_device_alloc", &DeviceStats::num_device_alloc},
    {"num_device_free", &DeviceStats::num_device_free},
    {"num_ooms", &DeviceStats::num_ooms},
    {"num_sync_all_streams", &DeviceStats::num_sync_all_streams},
}};

void addStat(std::vector<std::pair<std::string, std::int64_t>>& out, const std::string& prefix,
             const Stat& stat) {
    out.emplace_back(prefix + ".allocated", stat.allocated);
    out.emplace_back(prefix + ".current", stat.current);
    out.emplace_back(prefix + ".freed", stat.freed);
    out.emplace_back(prefix + ".peak", stat.peak);
}

}  // namespace

void DeviceStats::resetPeak() {
    for (const auto& field : kArrays) {
        for (Stat& stat : this->*field.member) stat.resetPeak();
    }
    oversize_allocations.resetPeak();
    oversize_segments.resetPeak();
}

void DeviceStats::resetAccumulated() {
    for (const auto& field : kArrays) {
        for (Stat& stat : this->*field.member) stat.resetAccumulated();
    }
    oversize_allocations.resetAccumulated();
    oversize_segments.resetAccumulated();
    num_alloc_retries = num_ooms = num_sync_all_streams = num_device_alloc = num_device_free = 0;
}

std::vector<std::pair<std::string, std::int64_t>> DeviceStats::flatten() const {
    std::vector<std::pair<std::string, std::int64_t>> out;
    out.reserve(122);
    for (const auto& field : kArrays) {
        for (std::size_t pool = 0; pool < 3; ++pool) {
            addStat(out, std::string(field.name) + "." + std::string(kPoolNames[pool]),
                    (this->*field.member)[pool]);
        }
    }
    addStat(out, "oversize_allocations", oversize_allocations);
    addStat(out, "oversize_segments", oversize_segments);
    for (const auto& scalar : kScalars) out.emplace_back(std::string(scalar.name), this->*scalar.member);
    std::sort(out.begin(), out.end());
    return out;
}

bool DeviceStats::set(std::string_view key, std::int64_t value) {
    for (const auto& scalar : kScalars) {
        if (key == scalar.name) {
            this->*scalar.member = value;
            return true;
        }
    }
    const auto lastDot = key.rfind('.');
    if (lastDot == std::string_view::npos) return false;
    const std::string_view field = key.substr(lastDot + 1);
    std::string_view head = key.substr(0, lastDot);
    Stat* stat = nullptr;
    if (head == "oversize_allocations") stat = &oversize_allocations;
    if (head == "oversize_segments") stat = &oversize_segments;
    if (stat == nullptr) {
        const auto poolDot = head.rfind('.');
        if (poolDot == std::string_view::npos) return false;
        const std::string_view pool = head.substr(poolDot + 1);
        head = head.substr(0, poolDot);
        for (const auto& array : kArrays) {
            if (array.name != head) continue;
            for (std::size_t i = 0; i < 3; ++i) {
                if (kPoolNames[i] == pool) stat = &(this->*array.member)[i];
            }
        }
    }
    if (stat == nullptr) return false;
    if (field == "current") stat->current = value;
    else if (field == "peak") stat->peak = value;
    else if (field == "allocated") stat->allocated = value;
    else if (field == "freed") stat->freed = value;
    else return false;
    return true;
}

}  // namespace allocscope::alloc
