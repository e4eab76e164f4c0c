#pragma once
// The Compare tab: runs of one program under several allocator configs, side by side. It starts
// a CompareJob (background threads, one recorded run per config), shows each run as it finishes
// (numbers read back from the session by CompareRunLoader), and loads the side-by-side segment
// maps at the main window's op off the GUI thread.
#include <QList>
#include <QString>
#include <QWidget>

#include <optional>
#include <thread>
#include <vector>

#include "app/gui/CompareRequest.h"
#include "views/data/CompareData.h"

class QLabel;
class QProgressBar;
class QPushButton;

namespace allocscope::storage {
class SessionWriter;
}
namespace allocscope::views {
class CompareWidget;
class WhatIfAnswerView;
}

namespace allocscope::app {

class CompareJob;

class ComparePage : public QWidget {
    Q_OBJECT
public:
    explicit ComparePage(QWidget* parent = nullptr);
    ~ComparePage() override;  // cancels a running comparison and waits for it

    // writer may be null (read-only session: Compare records nothing and says so). A running
    // comparison is cancelled and waited for first (it writes through the old writer).
    void setSession(const QString& sessionPath, storage::SessionWriter* writer);
    // Background job, progress, cancel; records one run per config. Results appear as runs finish.
    void startCompare(const CompareRequest& request);
    // Compare runs already in the session (read in the background).
    void showRuns(const QList<int>& runs);
    // The side-by-side segment maps follow the main scrubber's op.
    void setCurrentOp(qint64 op);
    views::CompareWidget* compareWidget() const;
    // The limit the compared recording replays at, as the Program panel says it (hidden when
    // the comparison is no recording's or the recording has no inferred limit).
    QLabel* limitLabel() const { return limit_; }
    // "This recording": the answer line per config over the charts (hidden otherwise).
    views::WhatIfAnswerView* answerView() const { return answer_; }

    bool isBusy() const { return busy_; }
    void cancel();
    // Session run numbers of the configs shown, in column order (-1: measured, not recorded).
    QList<int> shownRuns() const;
    QString lastMessage() const { return lastMessage_; }
    // Maps requests answered so far (tests wait on it).
    int mapsLoaded() const { return mapsLoaded_; }

    // File ▸ Export hooks: false + *error (a sentence naming the file) on failure.
    bool exportTableCsv(const QString& path, QString* error = nullptr) const;
    // The Compare tab's current page (bar charts, table, or timeline and maps).
    bool exportChartsPng(const QString& path, QString* error = nullptr) const;
    bool exportChartsSvg(const QString& path, QString* error = nullptr) const;

signals:
    void runsRecorded(const QList<int>& runs);
    void statusMessage(const QString& text);
    void busyChanged(bool busy);

private:
    void say(const QString& text);
    void setBusy(bool busy);
    void publish();
    void requestMaps(qint64 op);
    void startMapLoad(qint64 op);
    void jobFinished(bool cancelled, const QString& error);
    void joinHelpers();
    void publishAnswer();

    QString sessionPath_;
    storage::SessionWriter* writer_ = nullptr;
    views::CompareWidget* widget_ = nullptr;
    views::WhatIfAnswerView* answer_ = nullptr;
    std::optional<CompareRequest> recordingRequest_;  // the comparison runs "This recording"
    std::vector<std::optional<QString>> smallestGpu_;  // per column: the GPU search's answer
    QLabel* status_ = nullptr;
    QLabel* limit_ = nullptr;  // "This recording"'s limit line (WhatIfSetup::limitLine), above the answer
    QProgressBar* progress_ = nullptr;
    QPushButton* cancelButton_ = nullptr;
    CompareJob* job_ = nullptr;
    QString program_;
    qint64 opCount_ = 0;
    QString windowNote_;  // CompareJob::windowFound: the shown runs cover a window of the recording
    QStringList labels_;
    std::vector<std::optional<views::CompareRun>> results_;
    std::vector<double> runProgress_;
    QStringList failures_;
    QList<int> recorded_;
    QString lastMessage_;
    bool busy_ = false;
    // Background readers (run lists and maps); joined before a new one starts and on destruction.
    std::thread loadThread_;
    std::thread mapThread_;
    bool mapLoading_ = false;
    std::optional<qint64> pendingMapOp_;
    int generation_ = 0;   // session / comparison: answers for an older one are dropped
    int dataVersion_ = 0;  // the runs shown: maps for another list of runs are dropped
    int mapsLoaded_ = 0;
};

}  // namespace allocscope::app
