#pragma once
// The guided lessons inside the main window: a dock holding the lesson panel and the controller
// that runs lessons and walks their steps through the window (LessonNavigator). Hidden until
// Help ▸ Lessons (F1) or the start screen's link shows it.
#include <QDockWidget>

class QMainWindow;

namespace allocscope::views {
class LessonPanel;
}

namespace allocscope::app {

class LessonController;
class LessonNavigator;

class LessonDock : public QDockWidget {
    Q_OBJECT
public:
    // `navigator` (the main window) must outlive the dock.
    LessonDock(LessonNavigator* navigator, QWidget* parent = nullptr);
    ~LessonDock() override;

    LessonController* controller() const { return controller_; }
    views::LessonPanel* panel() const { return panel_; }
    // Where the lessons were loaded from failed: why ("" when they loaded).
    QString loadError() const { return loadError_; }

public slots:
    // Shows and raises the dock, with a lesson selected so Run works at once.
    void showLessons();

private:
    // Shrinks the other docks of this one's column towards their minimum heights.
    void giveMostOfTheColumn(QMainWindow* window);

    bool shownOnce_ = false;
    LessonController* controller_;
    views::LessonPanel* panel_;
    QString loadError_;
};

}  // namespace allocscope::app
