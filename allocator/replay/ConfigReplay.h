#pragma once
// How a recorded trace is replayed under a chosen allocator config: the one rule that
// `allocscope-cli replay` and the desktop app's "This recording" Run and Compare share, so the
// two give the same numbers for the same question.
//
// Under the recorded settings (or for a trace that recorded none, an RMM CSV) the replay reuses
// the recorded addresses and is checked against the recording; where it leaves the recording
// (another GPU size or memory fraction) new segments are placed by the driver model. Under any
// other config it is a what-if (TraceReplayer::replayWhatIf): new segments are placed by the
// chosen placement model, and nothing is compared.
#include <memory>
#include <optional>

#include "allocator/config/AllocatorConfig.h"
#include "allocator/replay/PlacementModel.h"
#include "allocator/replay/RecordedTrace.h"
#include "allocator/replay/TraceReplayer.h"

namespace allocscope::alloc {

enum class WhatIfPlacement {
    Driver,     // the CUDA driver model (DriverPlacementModel): the default
    Reference,  // the recorded run's addresses only (ReferencePlacement)
    Device,     // the simulated device's own policy (NoPlacement)
};

class ConfigReplay {
public:
    // `options` carries everything but the placement (config, GPU, fraction, sink...);
    // `recorded` is the trace's recorded config when it has one that PyTorch accepts.
    ConfigReplay(const RecordedTrace& trace, const std::optional<AllocatorConfig>& recorded, ReplayOptions options,
                 WhatIfPlacement placement = WhatIfPlacement::Driver);
    ConfigReplay(const ConfigReplay&) = delete;
    ConfigReplay& operator=(const ConfigReplay&) = delete;

    // Checked against the recording (its own settings), or a what-if.
    bool checked() const { return checked_; }
    // The options to replay with (placement set); a caller may still adjust sink / afterStep.
    ReplayOptions& options() { return options_; }
    // For TraceReplayer::replayWhatIf (storage::recordReplay takes it too); nullopt when checked.
    std::optional<AllocatorConfig> whatIfRecordedConfig() const;
    // Runs the replay (without recording it).
    ReplayResult run() const;

private:
    const RecordedTrace& trace_;
    AllocatorConfig recorded_;
    bool checked_ = false;
    std::unique_ptr<PlacementModel> model_;
    ReplayOptions options_;
};

}  // namespace allocscope::alloc
