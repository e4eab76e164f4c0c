#include "views/widgets/EventScrubber.h"

#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QSlider>
#include <QSpinBox>

#include <algorithm>

#include "views/util/Formatting.h"

namespace allocscope::views {

EventScrubber::EventScrubber(QWidget* parent)
    : QWidget(parent), slider_(new QSlider(Qt::Horizontal, this)), spin_(new QSpinBox(this)), total_(new QLabel(this)),
      info_(new QLabel(this)) {
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(4, 2, 4, 2);
    auto* caption = new QLabel(tr("&Event"), this);
    caption->setBuddy(slider_);
    layout->addWidget(caption);
    layout->addWidget(slider_, 1);
    layout->addWidget(spin_);
    layout->addWidget(total_);
    layout->addWidget(info_);
    // In a narrow window the slider keeps a usable width and the description is cut (its whole
    // text is the tooltip), not the other way round.
    slider_->setMinimumWidth(fontMetrics().horizontalAdvance(QLatin1Char('0')) * 16);
    info_->setMinimumWidth(fontMetrics().horizontalAdvance(QStringLiteral("op 12,345,678 ·")));
    slider_->setToolTip(tr("The current event of the run. ←/→ one event, Ctrl+←/→ one program op,\n"
                           "PgUp/PgDn phase to phase, Home/End first/last event. Dragging shows the nearest\n"
                           "keyframe's state (approximate); the exact state follows the release."));
    spin_->setToolTip(tr("Current event index (from 0); type a number and press Enter to jump there"));
    spin_->setKeyboardTracking(false);
    spin_->setAccelerated(true);
    slider_->setAccessibleName(tr("Event scrubber"));
    spin_->setAccessibleName(tr("Event index"));
    slider_->installEventFilter(this);
    spin_->installEventFilter(this);
    connect(slider_, &QSlider::valueChanged, this, &EventScrubber::onSliderMoved);
    connect(slider_, &QSlider::sliderReleased, this, [this] { emit dragFinished(current_); });
    connect(spin_, &QSpinBox::valueChanged, this, &EventScrubber::onSpinChanged);
    setEventCount(0);
}

void EventScrubber::setEventCount(qint64 count) {
    count_ = std::max<qint64>(count, 0);
    const int last = static_cast<int>(std::max<qint64>(count_ - 1, 0));
    syncing_ = true;
    slider_->setRange(0, last);
    slider_->setPageStep(std::max(1, last / 20));
    spin_->setRange(0, last);
    syncing_ = false;
    total_->setText(tr("of %1").arg(Formatting::count(count_)));
    setEnabled(count_ > 0);
    current_ = -1;
    if (count_ > 0) setCurrentEvent(count_ - 1);
}

void EventScrubber::setPhaseStarts(std::vector<qint64> starts) {
    phaseStarts_ = std::move(starts);
    std::sort(phaseStarts_.begin(), phaseStarts_.end());
}

void EventScrubber::setInfoText(const QString& text) {
    info_->setText(text);
    info_->setToolTip(text);
}
QString EventScrubber::infoText() const { return info_->text(); }
bool EventScrubber::isDragging() const { return slider_->isSliderDown(); }

void EventScrubber::show(qint64 event) {
    syncing_ = true;
    slider_->setValue(static_cast<int>(event));
    spin_->setValue(static_cast<int>(event));
    syncing_ = false;
}

void EventScrubber::setCurrentEvent(qint64 event) {
    if (count_ <= 0) return;
    event = std::clamp<qint64>(event, 0, count_ - 1);
    if (event == current_) return;
    current_ = event;
    show(event);
    emit eventChanged(event, false);
}

void EventScrubber::stepEvents(qint64 delta) { setCurrentEvent(current_ + delta); }

void EventScrubber::stepPhase(int direction) {
    if (phaseStarts_.empty()) {
        stepEvents(direction * std::max<qint64>(1, count_ / 20));
        return;
    }
    if (direction > 0) {
        const auto next = std::upper_bound(phaseStarts_.begin(), phaseStarts_.end(), current_);
        setCurrentEvent(next == phaseStarts_.end() ? count_ - 1 : *next);
    } else {
        auto before = std::lower_bound(phaseStarts_.begin(), phaseStarts_.end(), current_);
        setCurrentEvent(before == phaseStarts_.begin() ? 0 : *std::prev(before));
    }
}

void EventScrubber::onSliderMoved(int value) {
    if (syncing_ || value == current_) return;
    current_ = value;
    syncing_ = true;
    spin_->setValue(value);
    syncing_ = false;
    emit eventChanged(current_, slider_->isSliderDown());
}

void EventScrubber::onSpinChanged(int value) {
    if (syncing_) return;
    setCurrentEvent(value);
}

bool EventScrubber::eventFilter(QObject* watched, QEvent* event) {
    if (event->type() != QEvent::KeyPress || (watched != slider_ && watched != spin_)) return QWidget::eventFilter(watched, event);
    const auto* key = static_cast<QKeyEvent*>(event);
    const bool ctrl = key->modifiers().testFlag(Qt::ControlModifier);
    switch (key->key()) {
        case Qt::Key_Left:
        case Qt::Key_Right: {
            const int direction = key->key() == Qt::Key_Right ? 1 : -1;
            if (ctrl) {
                emit opStepRequested(direction);
            } else {
                stepEvents(direction);
            }
            return true;
        }
        case Qt::Key_PageUp: stepPhase(-1); return true;
        case Qt::Key_PageDown: stepPhase(1); return true;
        case Qt::Key_Home: setCurrentEvent(0); return true;
        case Qt::Key_End: setCurrentEvent(count_ - 1); return true;
        default: return QWidget::eventFilter(watched, event);
    }
}

}  // namespace allocscope::views
