#pragma once
// The answer of a comparison on "This recording", up front: per config, what changed against the
// recording (peak reserved, OOM or not, retries, cudaMalloc calls), the smallest GPU preset on
// which it runs without an OOM, and how firm the answer is. Plain numbers; the view words them.
#include <QString>
#include <QtGlobal>

#include <optional>
#include <vector>

namespace allocscope::views {

struct WhatIfCounts {
    quint64 peakReserved = 0;  // bytes
    quint64 ooms = 0;
    qint64 firstOomOp = -1;    // program op of the first OOM, -1 = none
    quint64 retries = 0;       // num_alloc_retries
    quint64 cudaMallocs = 0;   // segment allocations (cudaMalloc calls)
};

struct WhatIfAnswerLine {
    QString label;        // the config as listed ("expandable_segments:True", "default")
    WhatIfCounts counts;  // the config's replay
    // What it is told against: the recorded config replayed under the same GPU and memory
    // fraction ("the recorded config (default)"), or, for that config itself and when it is not
    // compared, the recording's own run ("the recording").
    QString against;
    WhatIfCounts baseline;
    // The GPU search: nullopt while it runs (or was cancelled); "" when no preset fits; else the
    // smallest preset's name.
    std::optional<QString> smallestGpu;
    // How firm the answer is: the number of the replay's decisions that rested on modelled (not
    // recorded) addresses. Not counted yet (the replay does not report it): nullopt, and the view
    // then says nothing about it rather than a number it does not have.
    std::optional<quint64> modelledDecisions;
};

struct WhatIfAnswer {
    QString conditions;  // "replayed on h100-80gb, memory fraction 0.03": where the configs ran
    std::vector<WhatIfAnswerLine> lines;  // in the comparison's order
    // The recording keeps only a window of its history (a ring buffer that overflowed): its
    // peaks, counts, OOMs and the smallest GPU found cover only that window. The line that says
    // so (alloc::WindowFigures' legend); "" for a whole history, and then nothing is marked.
    QString windowNote;
};

}  // namespace allocscope::views
