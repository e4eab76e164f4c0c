#pragma once
// Run on a demo workload (the left panel's Run with a workload picked, not "This recording"):
// the workload generates its program from the panel's parameters and seed, and the program is
// recorded into the session as a new run under the panel's config, GPU and memory, off the GUI
// thread. WhatIfReplay::runJob is the same for a recording replayed under another config.
#include <functional>

#include "allocator/config/AllocatorConfig.h"
#include "app/gui/ExperimentPanel.h"

class QObject;

namespace allocscope::storage {
class SessionWriter;
}

namespace allocscope::app {

class BackgroundJob;

class WorkloadRun {
public:
    // The job that records `choice`'s workload under `config` (parsed from choice.config).
    // `recorded(run, oom)` runs on the GUI thread once the run is stored: its number and the
    // first out-of-memory message ("" when the run had none).
    static BackgroundJob* job(storage::SessionWriter& writer, const RunChoice& choice, const alloc::AllocatorConfig& config,
                              std::function<void(int run, const QString& oom)> recorded, QObject* parent);
};

}  // namespace allocscope::app
