#include "app/LessonDock.h"

#include <QListWidget>

#include "app/LessonController.h"
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
    show();
    raise();
    if (panel_->list()->currentRow() < 0 && panel_->list()->count() > 0) panel_->list()->setCurrentRow(0);
    panel_->list()->setFocus();
}

}  // namespace allocscope::app
