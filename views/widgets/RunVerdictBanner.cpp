#include "views/widgets/RunVerdictBanner.h"

#include <QEvent>
#include <QFont>
#include <QPalette>
#include <QHBoxLayout>
#include <QLabel>

#include "views/data/RunVerdictText.h"
#include "views/theme/ThemePalette.h"

namespace allocscope::views {

RunVerdictBanner::RunVerdictBanner(QWidget* parent) : QFrame(parent), label_(new QLabel(this)) {
    setObjectName(QStringLiteral("runVerdictBanner"));
    setFrameShape(QFrame::StyledPanel);
    setAutoFillBackground(true);
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(8, 4, 8, 4);
    label_->setWordWrap(true);
    label_->setTextFormat(Qt::PlainText);
    layout->addWidget(label_, 1);
    hide();
}

void RunVerdictBanner::setRun(const RunListRow* run) {
    const QString text = run != nullptr ? RunVerdictText::bannerText(*run) : QString();
    warning_ = run != nullptr && !text.isEmpty() && RunVerdictText::bannerIsWarning(*run);
    label_->setText(text);
    setToolTip(run != nullptr && !text.isEmpty() ? RunVerdictText::toolTip(*run) : QString());
    applyColors();
    setVisible(!text.isEmpty());
}

void RunVerdictBanner::showRun(const RunListData& runs, int number) {
    for (const RunListRow& run : runs) {
        if (run.number == number) return setRun(&run);
    }
    setRun(nullptr);
}

QString RunVerdictBanner::text() const { return isHidden() ? QString() : label_->text(); }

void RunVerdictBanner::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::StyleChange) applyColors();
    QFrame::changeEvent(event);
}

void RunVerdictBanner::applyColors() {
    // A diverged run must stand out in either theme: amber-on-dark text for a warning, the
    // window's own colours (muted) for a note.
    const bool dark = ThemePalette::isDark(parentWidget() != nullptr ? parentWidget()->palette() : palette());
    QPalette p = label_->palette();
    QPalette frame = palette();
    if (warning_) {
        frame.setColor(QPalette::Window, dark ? QColor(0x5c, 0x3d, 0x00) : QColor(0xff, 0xe0, 0x8a));
        p.setColor(QPalette::WindowText, dark ? QColor(0xff, 0xe6, 0xa8) : QColor(0x3d, 0x2a, 0x00));
    } else {
        frame.setColor(QPalette::Window, dark ? QColor(0x2a, 0x33, 0x40) : QColor(0xe3, 0xec, 0xf7));
        p.setColor(QPalette::WindowText, dark ? QColor(0xd8, 0xe2, 0xee) : QColor(0x1d, 0x2b, 0x3a));
    }
    // setPalette sends us a PaletteChange, which comes back here: set it only when it differs.
    if (frame.color(QPalette::Window) != palette().color(QPalette::Window)) setPalette(frame);
    label_->setPalette(p);
    QFont f = label_->font();
    f.setBold(warning_);
    label_->setFont(f);
}

}  // namespace allocscope::views
