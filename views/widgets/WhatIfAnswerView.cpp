#include "views/widgets/WhatIfAnswerView.h"

#include <QLabel>
#include <QVBoxLayout>

#include "views/util/Formatting.h"

namespace allocscope::views {
namespace {

QString change(const QString& what, const QString& before, const QString& after) {
    return before == after ? WhatIfAnswerView::tr("%1 %2 (unchanged)").arg(what, after)
                           : WhatIfAnswerView::tr("%1 %2 → %3").arg(what, before, after);
}

QString oomPart(const WhatIfCounts& c, const WhatIfCounts& base) {
    const QString at = Formatting::count(c.firstOomOp);
    const QString baseAt = Formatting::count(base.firstOomOp);
    if (c.ooms == 0 && base.ooms == 0) return WhatIfAnswerView::tr("no OOM either");
    if (c.ooms == 0) {
        return base.ooms == 1 ? WhatIfAnswerView::tr("the OOM at op %1 does not happen").arg(baseAt)
                              : WhatIfAnswerView::tr("none of its %1 OOMs (the first at op %2) happen")
                                    .arg(Formatting::count(static_cast<qint64>(base.ooms)), baseAt);
    }
    const QString count = Formatting::counted(static_cast<qint64>(c.ooms), WhatIfAnswerView::tr("OOM"), WhatIfAnswerView::tr("OOMs"));
    if (base.ooms == 0) return WhatIfAnswerView::tr("%1, the first at op %2 (it had none)").arg(count, at);
    return WhatIfAnswerView::tr("still %1, the first at op %2 (it had %3, the first at op %4)")
        .arg(count, at, Formatting::count(static_cast<qint64>(base.ooms)), baseAt);
}

}  // namespace

WhatIfAnswerView::WhatIfAnswerView(QWidget* parent) : QWidget(parent), text_(new QLabel(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 4, 6, 4);
    text_->setWordWrap(true);
    text_->setTextFormat(Qt::RichText);
    text_->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    text_->setToolTip(tr("What each config changes against the recording (select to copy)"));
    layout->addWidget(text_);
    setVisible(false);
}

QString WhatIfAnswerView::sentence(const WhatIfAnswerLine& line) { return sentence(line, false); }

QString WhatIfAnswerView::sentence(const WhatIfAnswerLine& line, bool window) {
    const WhatIfCounts& c = line.counts;
    const WhatIfCounts& base = line.baseline;
    // Over a window every part below but "no GPU preset runs it" (the window alone OOMs, so the
    // whole run does) tells the window's figures: each carries the mark.
    const QString w = window ? tr(" (window)") : QString();
    QStringList parts;
    parts << oomPart(c, base) + w;
    parts << change(tr("peak reserved"), Formatting::bytes(base.peakReserved), Formatting::bytes(c.peakReserved)) + w;
    parts << change(tr("retries"), Formatting::count(static_cast<qint64>(base.retries)), Formatting::count(static_cast<qint64>(c.retries))) + w;
    parts << change(tr("cudaMalloc calls"), Formatting::count(static_cast<qint64>(base.cudaMallocs)),
                    Formatting::count(static_cast<qint64>(c.cudaMallocs))) + w;
    if (line.smallestGpu) {
        parts << (line.smallestGpu->isEmpty() ? tr("no GPU preset runs it without an OOM")
                                              : tr("smallest GPU preset without an OOM: %1").arg(*line.smallestGpu) + w);
    } else {
        parts << tr("smallest GPU: searching…");
    }
    if (line.modelledDecisions) {
        parts << (*line.modelledDecisions == 0
                      ? tr("no decision rested on a modelled address")
                      : tr("%1 decisions rested on modelled addresses").arg(Formatting::count(static_cast<qint64>(*line.modelledDecisions))));
    }
    return tr("%1 (against %2): %3").arg(line.label, line.against, parts.join(QStringLiteral("; ")));
}

void WhatIfAnswerView::setAnswer(const WhatIfAnswer& answer) {
    answer_ = answer;
    if (answer.lines.empty()) {
        text_->clear();
        setVisible(false);
        return;
    }
    QString html = tr("<b>What changes</b>, %1:").arg(answer.conditions.toHtmlEscaped());
    html += QStringLiteral("<ul style=\"margin-left:-20px\">");
    const bool window = !answer.windowNote.isEmpty();
    for (const WhatIfAnswerLine& line : answer.lines)
        html += QStringLiteral("<li>%1</li>").arg(sentence(line, window).toHtmlEscaped());
    html += QStringLiteral("</ul>");
    if (window) html += QStringLiteral("<p><i>%1</i></p>").arg(answer.windowNote.toHtmlEscaped());
    text_->setText(html);
    const QString tip = tr("What each config changes against the recording (select to copy)");
    text_->setToolTip(window ? tip + QStringLiteral("\n\n") + answer.windowNote : tip);
    setVisible(true);
}

QString WhatIfAnswerView::toolTipText() const { return text_->toolTip(); }

QString WhatIfAnswerView::plainText() const {
    QStringList lines;
    for (const WhatIfAnswerLine& line : answer_.lines) lines << sentence(line, !answer_.windowNote.isEmpty());
    if (!answer_.windowNote.isEmpty() && !lines.isEmpty()) lines << answer_.windowNote;
    return lines.join(QLatin1Char('\n'));
}

}  // namespace allocscope::views
