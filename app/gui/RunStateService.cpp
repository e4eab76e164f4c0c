#include "app/gui/RunStateService.h"

#include <QFileInfo>
#include <QMetaObject>
#include <QPointer>
#include <QThread>

#include <algorithm>

#include "app/gui/QtText.h"
#include "allocator/compare/WindowFigures.h"
#include "app/gui/BackgroundJob.h"
#include "app/gui/ViewDataAdapters.h"
#include "storage/session/HeatmapQuery.h"
#include "storage/session/RunProgress.h"
#include "storage/session/SessionError.h"
#include "storage/session/SessionReader.h"
#include "storage/session/StateCursor.h"
#include "storage/session/TimelineQuery.h"
#include "views/util/Formatting.h"

namespace allocscope::app {

namespace {
constexpr int kTimelineBuckets = 2000;
constexpr int kHeatmapColumns = 1024;
constexpr int kHeatmapRows = 512;
// Forward moves shorter than this replay events on the loaded state instead of decoding a
// keyframe (a keyframe holds thousands of blocks; a few hundred events are cheaper).
constexpr std::uint64_t kAdvanceLimit = 2048;

QString describe(const alloc::Event& e) {
    QString text = qs(alloc::actionName(e.action));
    if (e.action == alloc::EventAction::Oom) {
        text += QStringLiteral(" %1 requested").arg(views::Formatting::bytes(static_cast<qint64>(e.size)));
    } else {
        text += QLatin1Char(' ') + views::Formatting::bytes(static_cast<qint64>(e.action == alloc::EventAction::Alloc ? e.size : e.roundedSize));
    }
    if (e.cause != alloc::EventCause::Program) text += QStringLiteral(" (%1)").arg(qs(alloc::causeName(e.cause)));
    return text;
}
}  // namespace

struct RunStateService::Worker {
    QString path;
    int run = -1;
    int generation = 0;
    std::unique_ptr<storage::SessionReader> reader;
    std::unique_ptr<storage::StateCursor> cursor;
    bool loaded = false;
    std::vector<storage::PhaseSpan> phases;
    std::uint64_t eventCount = 0;
    QString windowNote;  // the run's history starts mid-run: its summary's peaks cover a window
};

RunStateService::RunStateService(QObject* parent)
    : QObject(parent), thread_(new QThread(this)), context_(new QObject), worker_(std::make_shared<Worker>()),
      stateToken_(std::make_shared<std::atomic<quint64>>(0)) {
    thread_->setObjectName(QStringLiteral("run state"));
    context_->moveToThread(thread_);
    connect(thread_, &QThread::finished, context_, &QObject::deleteLater);
    thread_->start();
}

RunStateService::~RunStateService() {
    delete markerJob_;
    markerJob_ = nullptr;
    // Drop the reader on its own thread, then stop.
    std::shared_ptr<Worker> worker = worker_;
    QMetaObject::invokeMethod(context_, [worker] { *worker = Worker{}; }, Qt::BlockingQueuedConnection);
    thread_->quit();
    thread_->wait();
}

template <typename Fn>
void RunStateService::post(Fn&& fn) {
    QMetaObject::invokeMethod(context_, std::forward<Fn>(fn), Qt::QueuedConnection);
}

bool RunStateService::isScanningMarkers() const { return markerJob_ != nullptr && markerJob_->isRunning(); }

void RunStateService::close() {
    ++generation_;
    run_ = -1;
    markersRun_ = -1;
    overviewPending_ = false;
    delete markerJob_;
    markerJob_ = nullptr;
    std::shared_ptr<Worker> worker = worker_;
    post([worker] { *worker = Worker{}; });
}

void RunStateService::openRun(const QString& path, int run) {
    const int generation = ++generation_;
    run_ = run;
    overviewPending_ = true;
    readsWithoutLocks_ = !QFileInfo::exists(path + QStringLiteral("-wal"));
    delete markerJob_;
    markerJob_ = nullptr;
    if (run != markersRun_ || path != markersPath_) {
        markersPath_ = path;
        markersRun_ = run;
        markersUpTo_ = 0;
        markers_.clear();
    }
    std::shared_ptr<Worker> worker = worker_;
    QPointer<RunStateService> self(this);
    post([self, worker, path, run, generation, markers = markers_] {
        RunOverview overview;
        overview.run = run;
        try {
            *worker = Worker{};
            worker->path = path;
            worker->run = run;
            worker->generation = generation;
            worker->reader = std::make_unique<storage::SessionReader>(path.toStdString(), false);
            const storage::RunRow row = worker->reader->run(run);
            // The count and the status of one committed state: a run another process records
            // may have grown since the row was read, and the overview must not pair an ended
            // status with the events before its last batch (LiveRunFollower would stop there).
            const storage::RunProgress progress = storage::RunProgress::read(*worker->reader, run);
            const std::uint64_t events = progress.events;
            overview.recording = !progress.ended;
            overview.complete = progress.complete;
            worker->eventCount = events;
            if (row.historyStart) {
                alloc::HistoryTruncation truncation;
                truncation.noHistory = row.historyStart->noHistory;
                worker->windowNote = QString::fromStdString(alloc::WindowFigures(0, truncation).legend());
            }
            overview.eventCount = static_cast<qint64>(events);
            if (events > 0) {
                worker->cursor = std::make_unique<storage::StateCursor>(*worker->reader, run);
                // A history that starts mid-run: the timeline starts where it does, not with the
                // events that rebuilt the state it started in.
                const std::uint64_t first = row.historyStart ? std::min(row.historyStart->firstSeq, events - 1) : 0;
                const storage::Timeline timeline = storage::TimelineQuery::build(*worker->reader, run, first, events - 1, kTimelineBuckets);
                overview.timeline = toTimelineData(timeline);
                overview.timeline.markers = markers;  // until the scan has read the new events
                // Long runs are resampled from the grid stored while recording; short ones (whose
                // stored grid has few columns) are replayed exactly.
                const storage::HeatmapGrid grid = storage::HeatmapQuery::build(*worker->reader, run, 0, events - 1, kHeatmapColumns, kHeatmapRows);
                overview.heatmap = toHeatmapData(grid, events);
            }
            worker->phases = worker->reader->phases(run);
            for (const storage::PhaseSpan& p : worker->phases) {
                overview.timeline.phases.push_back(views::TimelinePhase{QString::fromStdString(p.name), static_cast<qint64>(p.firstSeq),
                                                                        static_cast<qint64>(p.lastSeq)});
                overview.phaseStarts.push_back(static_cast<qint64>(p.firstSeq));
            }
        } catch (const std::exception& e) {
            const QString message = QString::fromUtf8(e.what());
            QMetaObject::invokeMethod(self, [self, generation, message] {
                if (!self || generation != self->generation_) return;
                self->overviewPending_ = false;
                emit self->failed(message);
            }, Qt::QueuedConnection);
            return;
        }
        QMetaObject::invokeMethod(self, [self, generation, path, overview = std::move(overview)] {
            if (!self || generation != self->generation_) return;
            self->overviewPending_ = false;
            emit self->overviewReady(overview);
            if (overview.eventCount > 0) self->startMarkerScan(path, overview.run, overview.eventCount, generation);
        }, Qt::QueuedConnection);
    });
}

void RunStateService::startMarkerScan(const QString& path, int run, qint64 eventCount, int generation) {
    delete markerJob_;
    QPointer<RunStateService> self(this);
    const qint64 from = run == markersRun_ && path == markersPath_ ? std::min(markersUpTo_, eventCount) : 0;
    markerJob_ = new BackgroundJob(
        tr("Finding OOMs and releases"),
        [self, path, run, eventCount, generation, from, found = from > 0 ? markers_ : std::vector<views::TimelineMarker>{}](BackgroundJob& job) {
            storage::SessionReader reader(path.toStdString(), false);
            std::vector<views::TimelineMarker> markers = found;
            if (from < eventCount) {
                std::vector<alloc::Event> after;  // the part of the first chunk not scanned before
                reader.forEachChunk(run, static_cast<std::uint64_t>(from), static_cast<std::uint64_t>(eventCount - 1),
                                    [&](std::uint64_t first, const std::vector<alloc::Event>& events) {
                                        if (first < static_cast<std::uint64_t>(from)) {
                                            after.assign(events.begin() + static_cast<std::ptrdiff_t>(std::min<std::uint64_t>(
                                                                              static_cast<std::uint64_t>(from) - first, events.size())),
                                                         events.end());
                                            appendTimelineMarkers(after, markers);
                                        } else {
                                            appendTimelineMarkers(events, markers);
                                        }
                                        job.reportProgress(first, static_cast<quint64>(eventCount));
                                        return !job.isCancelled();
                                    });
            }
            if (job.isCancelled()) return;
            job.deliver([self, path, run, eventCount, generation, markers = std::move(markers)] {
                if (!self || generation != self->generation_) return;
                if (run == self->markersRun_ && path == self->markersPath_) {
                    self->markers_ = markers;
                    self->markersUpTo_ = eventCount;
                }
                emit self->markersReady(run, markers);
            });
        },
        this);
    connect(markerJob_, &BackgroundJob::failed, this, &RunStateService::failed);
    markerJob_->start();
}

void RunStateService::requestState(qint64 event, bool approximate) {
    if (run_ < 0) return;
    const quint64 token = ++*stateToken_;
    const int generation = generation_;
    std::shared_ptr<Worker> worker = worker_;
    std::shared_ptr<std::atomic<quint64>> latest = stateToken_;
    QPointer<RunStateService> self(this);
    post([self, worker, latest, token, generation, event, approximate] {
        if (latest->load() != token || worker->generation != generation || !worker->cursor) return;
        RunStateFrame frame;
        try {
            storage::StateCursor& cursor = *worker->cursor;
            const std::uint64_t target = static_cast<std::uint64_t>(std::clamp<qint64>(event, 0, static_cast<qint64>(worker->eventCount) - 1));
            std::uint64_t shown = target;
            if (approximate) {
                storage::SqliteStatement s = worker->reader->db().prepare(
                    "SELECT seq FROM keyframe WHERE run = ? AND seq <= ? ORDER BY seq DESC LIMIT 1");
                s.bind(1, static_cast<std::int64_t>(worker->run)).bind(2, static_cast<std::int64_t>(target));
                if (s.step()) shown = std::min<std::uint64_t>(static_cast<std::uint64_t>(s.columnInt(0)), target);
            }
            storage::StateAtEvent state;
            if (worker->loaded && shown == cursor.seq() + 1) {
                state = cursor.step(1);
            } else if (worker->loaded && shown + 1 == cursor.seq()) {
                state = cursor.step(-1);
            } else if (worker->loaded && shown == cursor.seq()) {
                state = cursor.current();
            } else if (worker->loaded && shown > cursor.seq() && shown - cursor.seq() <= kAdvanceLimit) {
                cursor.advanceTo(shown);
                state = cursor.current();
            } else {
                state = cursor.load(shown);
            }
            worker->loaded = true;
            frame.run = worker->run;
            frame.requested = static_cast<qint64>(target);
            frame.shown = static_cast<qint64>(shown);
            frame.approximate = shown != target;
            frame.op = static_cast<qint64>(state.event.opIndex);
            frame.eventText = describe(state.event);
            for (const storage::PhaseSpan& p : worker->phases) {
                if (p.firstSeq <= shown && shown <= p.lastSeq) frame.phase = QString::fromStdString(p.name);  // innermost wins
            }
            frame.segments = toSegmentMapData(state.segments);
            frame.summary = toSummaryTableData(state.stats);
            frame.summary.windowNote = worker->windowNote;
        } catch (const std::exception& e) {
            worker->loaded = false;
            const QString message = QString::fromUtf8(e.what());
            QMetaObject::invokeMethod(self, [self, message] { if (self) emit self->failed(message); }, Qt::QueuedConnection);
            return;
        }
        QMetaObject::invokeMethod(self, [self, generation, frame = std::move(frame)] {
            if (self && generation == self->generation_) emit self->stateReady(frame);
        }, Qt::QueuedConnection);
    });
}

void RunStateService::requestBlock(quint64 address, qint64 event) {
    if (run_ < 0) return;
    const int generation = generation_;
    std::shared_ptr<Worker> worker = worker_;
    QPointer<RunStateService> self(this);
    post([self, worker, generation, address, event] {
        if (worker->generation != generation || !worker->reader) return;
        views::BlockInspectorData data;
        try {
            const storage::BlockHistory history = worker->reader->blockHistory(worker->run, address, static_cast<std::uint64_t>(event));
            // The block's state at the event, from the loaded layout (the cursor stands there).
            alloc::BlockState state = alloc::BlockState::Inactive;
            alloc::PoolId pool;  // the block's segment's pool: blocks carry none of their own
            if (worker->cursor && worker->loaded) {
                const auto& blocks = worker->cursor->model().blocks();
                const auto it = blocks.find(history.address);
                if (it != blocks.end()) {
                    state = it->second.state;
                    const auto& segments = worker->cursor->model().segmentTable();
                    const auto seg = segments.find(it->second.segment);
                    if (seg != segments.end()) pool = seg->second.poolId;
                }
            }
            data = toBlockInspectorData(history, state, pool);
        } catch (const std::exception& e) {
            const QString message = QString::fromUtf8(e.what());
            QMetaObject::invokeMethod(self, [self, message] { if (self) emit self->failed(message); }, Qt::QueuedConnection);
            return;
        }
        QMetaObject::invokeMethod(self, [self, generation, data = std::move(data)] {
            if (self && generation == self->generation_) emit self->blockReady(data);
        }, Qt::QueuedConnection);
    });
}

void RunStateService::requestOpStep(qint64 event, int direction) {
    if (run_ < 0) return;
    const int generation = generation_;
    std::shared_ptr<Worker> worker = worker_;
    QPointer<RunStateService> self(this);
    post([self, worker, generation, event, direction] {
        if (worker->generation != generation || !worker->reader || worker->eventCount == 0) return;
        qint64 target = event;
        try {
            storage::SessionReader& reader = *worker->reader;
            const auto opAt = [&](std::uint64_t seq) {
                std::uint64_t first = 0;
                const auto& chunk = reader.chunkAt(worker->run, seq, first);
                return chunk[seq - first].opIndex;
            };
            const auto last = static_cast<qint64>(worker->eventCount) - 1;
            const std::uint64_t op = opAt(static_cast<std::uint64_t>(std::clamp<qint64>(event, 0, last)));
            if (direction > 0) {
                // The first event of the next op that caused any.
                qint64 seq = event + 1;
                while (seq <= last && opAt(static_cast<std::uint64_t>(seq)) == op) ++seq;
                target = std::min(seq, last);
            } else {
                // The first event of the previous op that caused any.
                qint64 seq = event;
                while (seq > 0 && opAt(static_cast<std::uint64_t>(seq - 1)) == op) --seq;
                if (seq > 0) {
                    const std::uint64_t previous = opAt(static_cast<std::uint64_t>(seq - 1));
                    --seq;
                    while (seq > 0 && opAt(static_cast<std::uint64_t>(seq - 1)) == previous) --seq;
                }
                target = seq;
            }
        } catch (const std::exception&) {
            return;
        }
        QMetaObject::invokeMethod(self, [self, generation, target] {
            if (self && generation == self->generation_) emit self->opStepResolved(target);
        }, Qt::QueuedConnection);
    });
}

}  // namespace allocscope::app
