#pragma once
// Runs guided lessons for the GUI. A lesson runs on a worker thread (progress, cancel), its runs are
// recorded into a fresh session file (one per lesson run, in a temporary folder: the user's own
// sessions are never written), and each step then drives the main window through LessonNavigator:
// open that session, select the step's run, move the scrubber to the step's event, bring its view
// to the front, select its block. The panel (views::LessonPanel) only sees plain LessonData.
#include <QObject>
#include <QString>
#include <QTemporaryDir>

#include <atomic>
#include <memory>
#include <optional>
#include <vector>

#include "app/lessons/Lesson.h"
#include "app/lessons/LessonResult.h"
#include "views/data/LessonData.h"

class QThread;

namespace allocscope::views {
class LessonPanel;
}

namespace allocscope::app {

class LessonNavigator;

class LessonController : public QObject {
    Q_OBJECT
public:
    // `navigator` may be null (then steps move nothing); not owned, must outlive the controller.
    explicit LessonController(LessonNavigator* navigator, QObject* parent = nullptr);
    ~LessonController() override;  // cancels a running lesson and waits for its thread

    // Loads the lessons of `folder` ("" = LessonLibrary::defaultFolder()). False: lastError() says why.
    bool loadLessons(const QString& folder = QString());
    QString lastError() const { return lastError_; }
    QList<views::LessonListEntry> entries() const;
    int lessonCount() const { return static_cast<int>(lessons_.size()); }
    int indexOf(const QString& name) const;
    // The lesson before it runs (question, claim, steps' texts; no verdict).
    views::LessonData lessonData(int index) const;

    // Connects the panel to this controller both ways and fills its list.
    void attach(views::LessonPanel* panel);

    bool isRunning() const { return thread_ != nullptr; }
    // The last finished lesson (null before the first).
    const LessonResult* result() const { return result_.get(); }
    // The session its runs were recorded into, and each run's number there (0: not recorded, e.g.
    // the async backend or a config PyTorch refuses).
    QString sessionPath() const { return sessionPath_; }
    const std::vector<int>& sessionRuns() const { return sessionRuns_; }
    int currentStep() const { return step_; }

public slots:
    void start(int index);
    void cancel();
    // Moves the window to step `index` of the finished lesson.
    void showStep(int index);

signals:
    void progress(int done, int total, const QString& what);
    void finished(const allocscope::views::LessonData& lesson);
    void failed(const QString& message);
    void cancelled();
    void stepShown(int index);

private:
    struct Delivery;
    void deliver(const std::shared_ptr<Delivery>& outcome);
    views::LessonData toViewData(const LessonResult& result) const;

    LessonNavigator* navigator_;
    std::vector<Lesson> lessons_;
    QString lastError_;
    QTemporaryDir sessions_;
    int sessionCounter_ = 0;
    QThread* thread_ = nullptr;
    std::atomic<bool> cancel_{false};
    std::unique_ptr<LessonResult> result_;
    QString sessionPath_;
    std::vector<int> sessionRuns_;
    bool sessionOpen_ = false;
    int step_ = -1;
};

}  // namespace allocscope::app
