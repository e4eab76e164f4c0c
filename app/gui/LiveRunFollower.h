#pragma once
// Makes the shown run's views follow a run that another process is still recording (issue 38:
// a PyTorch program recording through liballocscope_torch.so, a CLI `run --db` on a cluster).
//
// The views are built from what was committed when the run was opened (RunStateService's
// overview, the Allocations tab's bands); nothing in them grows by itself. So when the
// SessionWatcher reports that the file changed and the shown run is not ended in the file, a
// small probe (storage::RunProgress, a background job) reads its committed event count and
// status; when either moved, the run is opened again: timeline, heatmap, segment map and memory
// summary through RunStateService, the Allocations tab through AllocationsController::refresh.
//
// Throttled: one probe or re-query at a time, at most one per watcher poll (a change that
// arrives meanwhile is remembered and looked at once the re-query is on screen and its timeline
// markers are found: a re-query cancels the marker scan, which on a long run would otherwise
// never finish); a run that did not change is not re-queried, and a run the file says has
// ended is not even probed.
//
// The user's place is kept: a user at the live edge (the last event, or wherever the run opened
// as long as they have not moved the scrubber since) follows the newest event; one who picked an earlier event stays
// there; a zoomed Allocations window stays as it is (one showing the whole run grows with it).
// While the user drags the scrubber nothing is re-queried; the refresh follows the release.
//
// The status bar says "recording — N events so far" while the run grows (the run list, which
// reads the file's "not ended" as interrupted, says "recording" for it too), "unfinished — N
// events" for a run the file still calls recording that has not grown while shown (a recorder
// elsewhere that is slow, or one that died); once the run ends a last re-query shows the final
// state, the run list its summary, and the status bar "run N finished recording — M events".
#include <QObject>
#include <QString>

#include <functional>
#include <optional>
#include <utility>

#include "storage/session/RunProgress.h"

class QLabel;
class QStatusBar;

namespace allocscope::views {
class AllocationsWidget;
class EventScrubber;
class RunListModel;
}  // namespace allocscope::views

namespace allocscope::app {

class AllocationsController;
class BackgroundJob;
class RunStateService;
class SessionWatcher;
struct RunOverview;

class LiveRunFollower : public QObject {
    Q_OBJECT
public:
    // What it follows and what it re-queries: the main window's parts.
    struct Parts {
        SessionWatcher* watcher = nullptr;
        RunStateService* service = nullptr;
        AllocationsController* allocations = nullptr;
        views::AllocationsWidget* allocationsView = nullptr;
        views::EventScrubber* scrubber = nullptr;
        views::RunListModel* runs = nullptr;  // its row says "recording" while the run grows
        QStatusBar* statusBar = nullptr;
        std::function<QString()> sessionPath;
        // Moves to an event once the re-queried overview is on screen (MainWindow::goToEvent).
        std::function<void(qint64)> goToEvent;
    };

    LiveRunFollower(Parts parts, QObject* parent);
    ~LiveRunFollower() override;

    // The shown run grew while shown and the file says its recorder has not ended it.
    bool isLive() const { return run_ > 0 && recording_ && grew_; }
    QLabel* label() const { return label_; }
    // Test hooks: probes of the file started, and re-queries of the shown run asked for.
    int probeCount() const { return probes_; }
    int refreshCount() const { return refreshes_; }
    bool isProbing() const { return probe_ != nullptr; }

public slots:
    // The watcher's changed(): looks at the shown run (or remembers to, when busy).
    void check();
    // The run list was read again: marks the growing run "recording" there (the file calls it
    // interrupted), or hides the label when the shown run is gone (another session).
    void syncShownRun();

private:
    void onOverview(const RunOverview& overview);
    void startProbe();
    void onProgress(const QString& path, int run, const storage::RunProgress& progress);
    void refresh(const storage::RunProgress& progress);
    void updateLabel();

    Parts parts_;
    QLabel* label_ = nullptr;
    BackgroundJob* probe_ = nullptr;
    QString path_;
    int run_ = -1;
    QString endedAs_;          // "finished recording" once the run ended while shown
    qint64 events_ = 0;        // in the overview on screen
    bool recording_ = false;   // the overview on screen: the file says the run has not ended
    bool grew_ = false;        // the shown run grew since it was selected
    bool pending_ = false;     // a change arrived while a probe or a re-query was running
    bool refreshing_ = false;  // the overview being loaded is a re-query of ours
    bool awaitingMarkers_ = false;  // the overview on screen still waits for its markers
    bool userMoved_ = false;   // the scrubber moved since the run was selected (re-queries move it silently)
    std::optional<std::pair<double, double>> allocationsWindow_;  // a zoomed window to restore
    int probes_ = 0;
    int refreshes_ = 0;
};

}  // namespace allocscope::app
