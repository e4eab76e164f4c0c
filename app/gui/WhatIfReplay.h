#pragma once
// Replaying "This recording" under the config and GPU the Program panel says: the replay that
// `allocscope-cli replay TRACE --config C --continue-after-oom` does (alloc::ConfigReplay: checked
// against the recording under its own settings, a what-if otherwise), recorded as a new run of
// the session named "FILE · CONFIG". The desktop app's Run (one config, a BackgroundJob) and
// Compare (several, CompareJob) both go through here, and so does the search for the smallest
// GPU preset on which a config runs without an OOM.
//
// A replay goes on after an OOM (skipping that tensor, like --continue-after-oom), so the run
// counts every OOM the config would have hit rather than stopping at the first.
#include <QString>

class QObject;

#include <functional>
#include <optional>

#include "allocator/replay/RecordedTrace.h"
#include "app/gui/WhatIfSetup.h"
#include "storage/session/ProgramRecording.h"

namespace allocscope::storage {
class SessionWriter;
}

namespace allocscope::app {

class BackgroundJob;

class WhatIfReplay {
public:
    // The recording's trace (its device); std::runtime_error saying what and where when the file
    // cannot be read any more.
    static alloc::RecordedTrace loadTrace(const RecordingSource& recording);
    // Replays `trace` as `setup` says and records it. std::runtime_error for a config PyTorch
    // refuses or cudaMallocAsync (nothing written then); storage::SessionError when the session
    // cannot be written. progress returning false cancels (the run stays, interrupted).
    static storage::RecordedReplay record(storage::SessionWriter& writer, const alloc::RecordedTrace& trace,
                                          const WhatIfSetup& setup, const storage::RecordProgress& progress = {});
    // The smallest GPU preset (by total memory, the CUDA context its own, the setup's memory
    // fraction applied) on which the replay has no OOM: a preset name, "" when none fits, nullopt
    // when cancelled. Replays are not recorded.
    static std::optional<QString> smallestPresetWithoutOom(const alloc::RecordedTrace& trace, const WhatIfSetup& setup,
                                                           const std::function<bool()>& cancelled);
    // Run's background job: records one replay; `recorded(runNumber)` runs on the GUI thread
    // when it is stored.
    static BackgroundJob* runJob(storage::SessionWriter& writer, const WhatIfSetup& setup, std::function<void(int run)> recorded,
                                 QObject* parent);
};

}  // namespace allocscope::app
