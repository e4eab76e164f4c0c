#include "allocator/replay/ConfigReplay.h"

#include "allocator/replay/DriverPlacementModel.h"
#include "allocator/replay/ReferencePlacement.h"

#include <utility>

namespace allocscope::alloc {

ConfigReplay::ConfigReplay(const RecordedTrace& trace, const std::optional<AllocatorConfig>& recorded, ReplayOptions options,
                           WhatIfPlacement placement)
    : trace_(trace), recorded_(recorded.value_or(AllocatorConfig{})), options_(std::move(options)) {
    // A source without recorded settings (RMM CSV) cannot contradict the config: it is replayed
    // with its own allocation addresses and checked; a snapshot is checked under its own config.
    checked_ = !trace.settings || (recorded && options_.config == *recorded);
    if (checked_) {
        // Where the replay leaves the recording (another memory fraction...), new segments are
        // placed by the driver model rather than arbitrarily.
        model_ = std::make_unique<DriverPlacementModel>(trace);
        options_.fallbackPlacement = model_.get();
        return;
    }
    switch (placement) {
        case WhatIfPlacement::Driver: model_ = std::make_unique<DriverPlacementModel>(trace); break;
        case WhatIfPlacement::Reference: model_ = std::make_unique<ReferencePlacement>(trace); break;
        case WhatIfPlacement::Device: model_ = std::make_unique<NoPlacement>(); break;
    }
    options_.placement = model_.get();
}

std::optional<AllocatorConfig> ConfigReplay::whatIfRecordedConfig() const {
    return checked_ ? std::nullopt : std::optional<AllocatorConfig>(recorded_);
}

ReplayResult ConfigReplay::run() const {
    return checked_ ? TraceReplayer::replay(trace_, options_) : TraceReplayer::replayWhatIf(trace_, recorded_, options_);
}

}  // namespace allocscope::alloc
