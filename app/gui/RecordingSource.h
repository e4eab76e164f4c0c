#pragma once
// "This recording" as a program: the PyTorch snapshot or RMM CSV a run of the session was
// replayed from, with what the Program panel shows about it (file, trace entries, device,
// recorded PYTORCH_CUDA_ALLOC_CONF) and the GPU the run used (total memory, memory fraction).
// Built from the session's run rows and the trace file itself (read once per file; the file is
// only read). A run whose file is gone offers no recording: there is nothing to replay.
#include <QHash>
#include <QString>

#include <cstdint>
#include <optional>
#include <vector>

#include "allocator/replay/MemoryLimit.h"
#include "storage/session/SessionTypes.h"
#include "views/data/RunListData.h"

namespace allocscope::app {

struct RecordingSource {
    QString path;             // the trace file, absolute as the run stored it
    QString fileName;         // its name: "kv_growth_limited__default.pickle"
    qint64 device = 0;        // the snapshot's device (0 for an RMM CSV)
    QString origin;           // "snapshot device 0", "RMM CSV"
    QString sourceKind;       // "snapshot" or "csv"
    qint64 traceEntries = -1; // that device's trace entries; -1: not counted (a big file, see collect)
    QString recordedConfig;   // allocator_settings.PYTORCH_CUDA_ALLOC_CONF ("" = defaults or none recorded)
    bool hasRecordedSettings = false;  // false: an RMM CSV (PyTorch's defaults)
    QString gpu;              // the GPU the run used (preset name)
    quint64 totalMemory = 0;  // and its total memory
    double memoryFraction = 1.0;
    int run = 0;              // the session run it came from
    // The limit the run replayed under when the import inferred it from the recording's OOM
    // (issue 35; nullopt: no OOM, a big file, or the run replayed on a device the user chose).
    // The session keeps only the device's name, total memory and fraction, not whence the limit
    // came nor the CUDA context a full-device limit leaves: RecordingCatalog infers it again.
    std::optional<alloc::MemoryLimit> limit;

    // "kv_growth_limited__default.pickle · expandable_segments:True" (a device suffix when the
    // snapshot has several devices is part of fileName's label, see runName).
    QString runName(const QString& configText) const;
    // One line per fact, for the Program panel.
    QString description() const;
};

using RecordingSources = QHash<int, RecordingSource>;  // by session run number

class RecordingCatalog {
public:
    // The recordings behind `runs` (snapshot / CSV runs whose file can still be read), by run
    // number. Reads each distinct file below kCountFilesBelow once per call, and not again while
    // its size and modification time stay the same (a process-wide cache); a bigger file is not
    // read (its entries stay uncounted, its recorded config is the run's). Safe from any thread.
    static constexpr std::uint64_t kCountFilesBelow = 16ull << 20;
    static RecordingSources collect(const std::vector<storage::RunRow>& runs);
    // Splits a run's stored source, "PATH (snapshot device N)" or "PATH (RMM CSV)" (or a bare
    // path, as `compare --db` stores it), into the path and the device.
    static std::optional<RecordingSource> parseSource(const storage::RunRow& row);
    // Whether run `number` of the run list is a replay of a snapshot or CSV (its recording may
    // simply not be collected yet: the catalog is read after the run list).
    static bool mayBeReplay(const views::RunListData& runs, int number);
};

}  // namespace allocscope::app
