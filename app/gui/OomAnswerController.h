#pragma once
// The OOM tab (issue 35): for a run that ran out of memory, the answer to "why, and would a
// setting have avoided it?" (views::OomAnswerView). When the selected run has an OOM the tab
// appears and comes to the front; a background job reads the first oom event and the state and
// live blocks right after it from the session (OomAnswerAdapter::fromSession: on screen at once),
// then, for a run replayed from a recording, the analysis (alloc::OomAnalyzer: the inferred
// limit, PyTorch's message, the what-if over `recommend`'s configs) fills in the rest. The tab's
// "Blocks and call stacks at the failure" moves the window's scrubber to the oom event and shows
// the Stacks tab there (LessonNavigator). A run without an OOM hides the tab.
#include <QObject>
#include <QString>

#include <functional>
#include <optional>

#include "allocator/compare/OomAnswer.h"
#include "storage/session/SessionTypes.h"
#include "views/data/RunListData.h"

class QTabWidget;

namespace allocscope::views {
class OomAnswerView;
}

namespace allocscope::app {

class BackgroundJob;
class LessonNavigator;

class OomAnswerController : public QObject {
    Q_OBJECT
public:
    // The analysis of a recorded run (off the GUI thread); nullopt when the run has no recording
    // to analyse (a simulated workload run, a file that is gone). Throws to report a failure.
    using Analysis = std::function<std::optional<alloc::OomAnswer>(const storage::RunRow& run, BackgroundJob& job)>;

    OomAnswerController(QTabWidget* tabs, LessonNavigator* window, QObject* parent = nullptr);
    ~OomAnswerController() override;
    // Adds the (hidden) OOM tab to the window's tabs and returns its controller.
    static OomAnswerController* install(QTabWidget* tabs, LessonNavigator* window, QObject* parent);

    // The run selected in the run list (its row says whether it has OOMs).
    void setRun(const QString& path, const views::RunListData& runs, int number);
    void clear();
    void bringToFront();
    // A view was chosen on purpose (a lesson's step, --view): the next run with an OOM shows its
    // tab without bringing it to the front.
    void keepChosenView() { keepView_ = true; }
    // Replaces the recorded-run analysis (tests; the default is OomAnalyzer's).
    void setAnalysis(Analysis analysis) { analysis_ = std::move(analysis); }

    views::OomAnswerView* view() const { return view_; }
    bool isComputing() const { return job_ != nullptr; }
    int run() const { return run_; }

    static Analysis defaultAnalysis();

signals:
    void answerShown();   // the view shows the session's facts, and again with the analysis
    void analysisDone();  // the analysis finished (or there is none for this run)

private:
    void start();
    void showTab(bool visible);

    QTabWidget* tabs_;
    LessonNavigator* window_;
    views::OomAnswerView* view_;
    Analysis analysis_;
    QString path_;
    int run_ = 0;
    BackgroundJob* job_ = nullptr;
    quint64 generation_ = 0;
    bool keepView_ = false;
};

}  // namespace allocscope::app
