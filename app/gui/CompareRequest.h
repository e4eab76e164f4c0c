#pragma once
// What the Compare tab is asked to run: one program (a demo workload with its parameters, or a
// recorded trace replayed as a program) under several PYTORCH_CUDA_ALLOC_CONF strings, on one
// simulated GPU. Plain values, so the main window can build it from its forms and hand it over.
#include <QList>
#include <QPair>
#include <QString>
#include <QVariantMap>

#include <optional>

#include "app/gui/WhatIfSetup.h"

namespace allocscope::app {

struct CompareRequest {
    QString workload;            // demo workload name (alloc::WorkloadRegistry), or empty when tracePath is set
    QVariantMap params;          // workload parameters (key -> value as views::ParamFormWidget gives them)
    quint64 seed = 1;
    QString tracePath;           // a PyTorch snapshot / RMM CSV to replay as the program instead
    QString gpuPreset;           // allocator/device/GpuPresets name; empty = the workload's own
    std::optional<double> memoryFraction;
    QList<QPair<QString, QString>> configs;  // (label, PYTORCH_CUDA_ALLOC_CONF string)

    // "This recording" (set instead of workload / tracePath): every config is a replay of the
    // recording as `allocscope-cli replay --config C --continue-after-oom` does it (WhatIfReplay),
    // on the setup's GPU and memory fraction (memoryFraction above is unused then), and the
    // recording's own run is shown first, as the baseline of the answer.
    std::optional<WhatIfSetup> recording;
};

}  // namespace allocscope::app
