#pragma once
// The Stacks tab (issue 16): the StacksWidget (call-stack tree + icicle, live tensors table) fed
// by a StacksController. The window tells it the run and the scrubber's event; it computes only
// while it is on screen (a hidden tab is brought up to date when shown). A click on a frame or a
// tensor selects that block through the window (LessonNavigator: the segment map's own path),
// moving the scrubber first when the tab shows another event (the peak).
#include <QWidget>

#include "app/gui/LessonNavigator.h"
#include "app/gui/StacksController.h"
#include "views/data/RunListData.h"

class QTabWidget;

namespace allocscope::views {
class StacksWidget;
}

namespace allocscope::app {

class StacksPage : public QWidget {
    Q_OBJECT
public:
    explicit StacksPage(QWidget* parent = nullptr, LessonNavigator* window = nullptr);
    // Adds the page to the window's tabs ("Stacks", with its tooltip) and returns it.
    static StacksPage* install(QTabWidget* tabs, LessonNavigator* window);
    // Brings the tab (and its Call stacks or Live tensors sub-tab) to the front.
    void bringToFront(bool tensors);

    // The run shown (session file, run number, its event count) and the session's runs (the
    // diff's "another run" choices are the others).
    void setRun(const QString& path, int run, qint64 eventCount, const views::RunListData& runs);
    void setEvent(qint64 event);  // the scrubber's exact event
    void clear();

    views::StacksWidget* widget() const { return widget_; }
    StacksController* controller() const { return controller_; }
    const StacksResult& result() const { return result_; }
    // A computation is under way or the shown result is older than what was asked for.
    bool isComputing() const { return controller_->isComputing() || (dirty_ && isVisible()); }

signals:
    void resultShown();

protected:
    void showEvent(QShowEvent* event) override;

private:
    void refresh();

    void selectBlock(quint64 address, qint64 event);

    LessonNavigator* window_;
    views::StacksWidget* widget_;
    StacksController* controller_;
    StacksResult result_;
    QString path_;
    int run_ = 0;
    qint64 event_ = -1;
    bool dirty_ = false;
    quint64 pendingBlock_ = 0;  // to select once the scrubber reaches pendingEvent_
    qint64 pendingEvent_ = -1;
};

}  // namespace allocscope::app
