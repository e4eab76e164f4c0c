#pragma once
// "This recording" replayed under a config on a GPU: what the Program panel says a Run (one
// config) or a Compare (the configs of the "Compare with" list) replays. Plain values.
#include <QString>

#include <optional>

#include "app/gui/RecordingSource.h"

namespace allocscope::app {

struct WhatIfSetup {
    RecordingSource recording;
    QString configText;  // PYTORCH_CUDA_ALLOC_CONF of a Run (Compare takes its configs from its request)
    QString gpuName;     // preset name, or the recording's own GPU
    quint64 totalMemory = 0;
    quint64 otherMemory = 0;
    std::optional<double> memoryFraction;  // nullopt: no cap
    // What the Program panel says of this limit (MemoryLimit::describe: inferred from the OOM, or
    // as given); "" when the recording has no inferred limit. Compare shows it above its answer.
    QString limitLine;

    QString runName() const { return recording.runName(configText.trimmed()); }  // "FILE · CONFIG"
};

}  // namespace allocscope::app
