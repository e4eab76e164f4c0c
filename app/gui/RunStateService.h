#pragma once
// Everything the centre and right of the window show for the selected run, loaded on one worker
// thread with its own SessionReader and StateCursor: the overview (timeline, whole-run heatmap,
// phases), the state at the scrubber's event (segment map + memory_summary()), a block's
// history, and op stepping. The GUI thread only receives finished view-data structs.
//
// Scrubbing: requests carry a token and the worker skips every request that a newer one has
// replaced, so a fast drag never queues work; an `approximate` request shows the state at the
// nearest keyframe at or before the event (one keyframe decode), the exact one the precise
// state. Timeline markers (OOMs, retries, GC, empty_cache) need every event read: a separate
// background scan delivers them after the overview. The same run opened again (a run another
// process records, grown: LiveRunFollower) keeps the markers found so far in its new overview,
// and the scan reads only the events after them.
#include <QObject>
#include <QString>

#include <atomic>
#include <memory>
#include <vector>

#include "views/data/BlockInspectorData.h"
#include "views/data/HeatmapData.h"
#include "views/data/RunListData.h"
#include "views/data/SegmentMapData.h"
#include "views/data/SummaryTableData.h"
#include "views/data/TimelineData.h"

class QThread;

namespace allocscope::app {

class BackgroundJob;

struct RunOverview {
    int run = 0;
    qint64 eventCount = 0;
    // The file says the run's recorder has not ended it: another process records it now, or
    // stopped without finishing (storage::RunProgress). LiveRunFollower follows such a run.
    bool recording = false;
    bool complete = false;  // finish() committed: the run's summary is stored
    views::TimelineData timeline;
    views::HeatmapData heatmap;
    std::vector<qint64> phaseStarts;
};

struct RunStateFrame {
    int run = 0;
    qint64 requested = 0;  // the event asked for
    qint64 shown = 0;      // the event whose state this is (a keyframe's when approximate)
    bool approximate = false;
    qint64 op = 0;
    QString eventText;     // "alloc 20.0 MiB (program)"
    QString phase;         // innermost phase containing the event ("" = none)
    views::SegmentMapData segments;
    views::SummaryTableData summary;
};

class RunStateService : public QObject {
    Q_OBJECT
public:
    explicit RunStateService(QObject* parent = nullptr);
    ~RunStateService() override;

    // Shows run `run` of the session at `path` (a fresh reader: it sees everything committed).
    void openRun(const QString& path, int run);
    void close();
    int run() const { return run_; }
    // The shown run was opened while the session had no write-ahead log: its reader is immutable
    // (SqliteDb: no locks, pages cached for good), right only while nobody writes the file. Once
    // another process writes, the run must be opened again (MainWindow::reload).
    bool readsWithoutLocks() const { return readsWithoutLocks_; }
    bool isLoadingOverview() const { return overviewPending_; }
    bool isScanningMarkers() const;

    void requestState(qint64 event, bool approximate);
    void requestBlock(quint64 address, qint64 event);
    void requestOpStep(qint64 event, int direction);

signals:
    void overviewReady(const allocscope::app::RunOverview& overview);
    void markersReady(int run, const std::vector<allocscope::views::TimelineMarker>& markers);
    void stateReady(const allocscope::app::RunStateFrame& frame);
    void blockReady(const allocscope::views::BlockInspectorData& block);
    void opStepResolved(qint64 event);
    void failed(const QString& message);

private:
    struct Worker;
    template <typename Fn>
    void post(Fn&& fn);
    void startMarkerScan(const QString& path, int run, qint64 eventCount, int generation);

    QThread* thread_;
    QObject* context_;  // lives in thread_: the target of posted work
    std::shared_ptr<Worker> worker_;  // touched only on thread_
    std::shared_ptr<std::atomic<quint64>> stateToken_;
    BackgroundJob* markerJob_ = nullptr;
    // The markers of the run last scanned, over its first markersUpTo_ events: events are only
    // ever appended to a run, so these stay right when the run grows.
    QString markersPath_;
    int markersRun_ = -1;
    qint64 markersUpTo_ = 0;
    std::vector<views::TimelineMarker> markers_;
    int run_ = -1;
    int generation_ = 0;
    bool overviewPending_ = false;
    bool readsWithoutLocks_ = false;
};

}  // namespace allocscope::app
