#include "app/gui/LessonDock.h"

#include <QListWidget>
#include <QMainWindow>

#include "app/gui/LessonController.h"
#include "views/widgets/LessonPanel.h"

namespace allocscope::app {

LessonDock::LessonDock(LessonNavigator* navigator, QWidget* parent)
    : QDockWidget(tr("Lessons"), parent), controller_(new LessonController(navigator, this)), panel_(new views::LessonPanel) {
    setObjectName(QStringLiteral("lessonsDock"));
    setToolTip(tr("Guided lessons: one piece of common allocator advice each, run and measured"));
    // Lessons come from resources/lessons (or $ALLOCSCOPE_LESSONS_DIR); a missing folder must not
    // stop the app, so the reason is kept for the status bar instead.
    if (!controller_->loadLessons()) loadError_ = controller_->lastError();
    controller_->attach(panel_);
    setWidget(panel_);
}

LessonDock::~LessonDock() {
    // The controller waits for a running lesson's thread; do that while the panel still exists.
    delete controller_;
    controller_ = nullptr;
}

void LessonDock::showLessons() {
    const bool first = !shownOnce_;
    shownOnce_ = true;
    show();
    raise();
    // The first time, the lesson takes most of its dock column: shown at its size hint beside the
    // Inspector and the memory summary it got a third, and its question, steps and verdict had to
    // be scrolled through in 180 px. Later the user's own sizes stay.
    auto* window = qobject_cast<QMainWindow*>(parentWidget());
    if (first && window != nullptr && !isFloating()) giveMostOfTheColumn(window);
    if (panel_->list()->currentRow() < 0 && panel_->list()->count() > 0) panel_->list()->setCurrentRow(0);
    panel_->list()->setFocus();
}

void LessonDock::giveMostOfTheColumn(QMainWindow* window) {
    // The other docks of the column keep a little more than their minimum (a few rows each).
    constexpr int kOtherSlack = 40;
    const Qt::DockWidgetArea area = window->dockWidgetArea(this);
    QList<QDockWidget*> column;
    QList<int> heights;
    int others = 0;
    for (QDockWidget* dock : window->findChildren<QDockWidget*>()) {
        if (dock == this || dock->isFloating() || !dock->isVisible() || window->dockWidgetArea(dock) != area) continue;
        column << dock;
        heights << dock->minimumSizeHint().height() + kOtherSlack;
        others += heights.back();
    }
    column << this;
    heights << std::max(window->height() - others, window->height() / 2);
    window->resizeDocks(column, heights, Qt::Vertical);
}

}  // namespace allocscope::app
