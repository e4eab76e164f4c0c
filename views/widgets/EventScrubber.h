#pragma once
// The event scrubber under the views: a slider and a spin box over the selected run's events,
// and a line saying where we are ("event 1,234 of 5,000 · op 210 · phase forward"). Keys (on the
// slider or the spin box): ←/→ one event, Ctrl+←/→ one program op (the window resolves it),
// PgUp/PgDn to the previous / next phase start (or 1/20 of the run without phases), Home/End.
// While the slider is dragged, eventChanged says `dragging` so the window may show an approximate
// state; dragFinished follows the release.
#include <QWidget>

#include <vector>

class QLabel;
class QSlider;
class QSpinBox;

namespace allocscope::views {

class EventScrubber : public QWidget {
    Q_OBJECT
public:
    explicit EventScrubber(QWidget* parent = nullptr);

    void setEventCount(qint64 count);  // 0 disables the scrubber; moves to the last event
    qint64 eventCount() const { return count_; }
    qint64 currentEvent() const { return current_; }
    void setPhaseStarts(std::vector<qint64> starts);  // ascending event indices
    // The description right of the spin box (op, phase, "approximate"); set by the window.
    void setInfoText(const QString& text);
    QString infoText() const;
    bool isDragging() const;

    QSlider* slider() const { return slider_; }
    QSpinBox* spinBox() const { return spin_; }

public slots:
    // Moves to `event` (clamped) and emits eventChanged(event, false) if it moved.
    void setCurrentEvent(qint64 event);
    void stepEvents(qint64 delta);
    void stepPhase(int direction);

signals:
    void eventChanged(qint64 event, bool dragging);
    void dragFinished(qint64 event);
    void opStepRequested(int direction);  // Ctrl+←/→: the window knows the events' ops

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void show(qint64 event);
    void onSliderMoved(int value);
    void onSpinChanged(int value);

    QSlider* slider_;
    QSpinBox* spin_;
    QLabel* total_;
    QLabel* info_;
    qint64 count_ = 0;
    qint64 current_ = 0;
    std::vector<qint64> phaseStarts_;
    bool syncing_ = false;
};

}  // namespace allocscope::views
