#pragma once
// The guided lessons panel: a list of lessons; for the chosen one its question and the claim as
// commonly stated; a Run button with progress (and Cancel); once run, the steps with Back/Next
// (each step moves the main window's views: the controller does that on stepRequested) and the
// verdict with the measured numbers. Everything is reachable by keyboard (list, then buttons with
// mnemonics; Alt+Left / Alt+Right step) and has tooltips. Colours come from the palette.
#include <QWidget>

#include "views/data/LessonData.h"

class QLabel;
class QListWidget;
class QProgressBar;
class QPushButton;
class QTableWidget;
class QGroupBox;
class QSplitter;

namespace allocscope::views {

class LessonPanel : public QWidget {
    Q_OBJECT
public:
    explicit LessonPanel(QWidget* parent = nullptr);

    void setLessons(const QList<LessonListEntry>& lessons);
    // The chosen lesson, before (hasResult false) or after a run.
    void setLesson(const LessonData& lesson);
    void setRunning(bool running);
    void setProgress(int done, int total, const QString& what);
    void showError(const QString& message);
    // Shows step `index` (clamped); emits stepRequested when it changed.
    void showStep(int index);

    int currentLesson() const;
    int currentStep() const { return step_; }
    const LessonData& lesson() const { return lesson_; }
    QString stepText() const;
    QString verdictHeadline() const;  // "FALSE", "TRUE", "IT DEPENDS" (empty before a run)
    QString statusText() const;

    QListWidget* list() const { return list_; }
    QPushButton* runButton() const { return run_; }
    QPushButton* cancelButton() const { return cancel_; }
    QPushButton* backButton() const { return back_; }
    QPushButton* nextButton() const { return next_; }
    QTableWidget* numbersTable() const { return numbers_; }
    QProgressBar* progressBar() const { return progress_; }
    // From this width the list stands beside the lesson; narrower (a side dock), above it.
    static constexpr int kSideBySideWidth = 640;
    Qt::Orientation layoutOrientation() const;

signals:
    void lessonSelected(int index);
    void runRequested(int index);
    void cancelRequested();
    void stepRequested(int index);

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void updateButtons();
    void updateVerdict();

    LessonData lesson_;
    int step_ = -1;
    bool running_ = false;
    bool splitSet_ = false;  // the list / lesson split was given its first sizes
    QSplitter* splitter_;
    QListWidget* list_;
    QLabel* title_;
    QLabel* question_;
    QLabel* claim_;
    QLabel* program_;
    QPushButton* run_;
    QPushButton* cancel_;
    QProgressBar* progress_;
    QLabel* status_;
    QLabel* stepCounter_;
    QLabel* stepText_;
    QLabel* stepWhere_;
    QPushButton* back_;
    QPushButton* next_;
    QGroupBox* verdictBox_;
    QLabel* verdict_;
    QLabel* verdictText_;
    QTableWidget* numbers_;
};

}  // namespace allocscope::views
