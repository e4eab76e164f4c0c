#include "views/widgets/OomAnswerView.h"

#include <QApplication>
#include <QClipboard>
#include <QEvent>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QTableView>
#include <QTreeWidget>
#include <QStyle>
#include <QVBoxLayout>

#include <algorithm>

#include "views/util/Formatting.h"
#include "views/util/MonospaceFont.h"
#include "views/widgets/OomRequestBar.h"
#include "views/widgets/OomWhatIfModel.h"

namespace allocscope::views {
namespace {
constexpr int kHolderRowsShown = 10;   // the holders list scrolls inside itself beyond this
constexpr int kMessageLines = 6;
constexpr int kConfigChars = 24;       // the what-if's config column wraps beyond this
constexpr int kIntervalChars = 18;     // and its interval column

QString bytesOrUnknown(qint64 bytes) { return bytes < 0 ? OomAnswerView::tr("not known") : Formatting::bytes(bytes); }

QString streamText(quint64 stream) {
    return stream == 0 ? OomAnswerView::tr("stream 0 (default)") : OomAnswerView::tr("stream 0x%1").arg(stream, 0, 16);
}

QLabel* sectionTitle(const QString& text, QWidget* parent) {
    auto* label = new QLabel(text, parent);
    QFont font = label->font();
    font.setBold(true);
    label->setFont(font);
    return label;
}

}  // namespace

OomAnswerView::OomAnswerView(QWidget* parent)
    : QWidget(parent),
      scroll_(new QScrollArea(this)),
      content_(new QWidget),
      status_(new QLabel(content_)),
      headline_(new QLabel(content_)),
      headlineNote_(new QLabel(content_)),
      subtitle_(new QLabel(content_)),
      details_(new QWidget(content_)),
      bar_(new OomRequestBar(details_)),
      stacks_(new QPushButton(tr("Blocks and call stacks at the failure"), details_)),
      whatIfNote_(new QLabel(details_)),
      whatIfModel_(new OomWhatIfModel(this)),
      whatIfTable_(new QTableView(details_)),
      holdersNote_(new QLabel(details_)),
      holders_(new QTreeWidget(details_)),
      message_(new QPlainTextEdit(details_)),
      copy_(new QPushButton(tr("Copy"), details_)) {
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    scroll_->setWidgetResizable(true);
    scroll_->setFrameShape(QFrame::NoFrame);
    scroll_->setWidget(content_);
    outer->addWidget(scroll_);

    auto* layout = new QVBoxLayout(content_);
    layout->setContentsMargins(12, 10, 12, 10);
    layout->setSpacing(8);
    status_->setWordWrap(true);
    layout->addWidget(status_);
    for (QLabel* label : {headline_, headlineNote_, subtitle_}) {
        label->setWordWrap(true);
        label->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
        layout->addWidget(label);
    }
    headline_->setObjectName(QStringLiteral("oomHeadline"));
    subtitle_->setForegroundRole(QPalette::PlaceholderText);  // muted, and still the theme's
    layout->addWidget(details_);
    layout->addStretch(1);

    auto* d = new QVBoxLayout(details_);
    d->setContentsMargins(0, 0, 0, 0);
    d->setSpacing(8);

    // The facts: one name / value pair per line, so a narrow window wraps values, not columns.
    auto* grid = new QGridLayout;
    grid->setHorizontalSpacing(14);
    grid->setVerticalSpacing(3);
    const QStringList names{tr("Request"), tr("Limit"), tr("Reserved"), tr("Allocated"), tr("Cached free"), tr("Largest free block"), tr("Verdict")};
    for (int i = 0; i < names.size(); ++i) {
        auto* name = new QLabel(names[i], details_);
        auto* value = new QLabel(details_);
        name->setAlignment(Qt::AlignRight | Qt::AlignTop);
        value->setWordWrap(true);
        value->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
        grid->addWidget(name, i, 0);
        grid->addWidget(value, i, 1);
        factLabels_.append(qMakePair(name, value));
    }
    grid->setColumnStretch(1, 1);
    d->addLayout(grid);
    d->addWidget(bar_);

    auto* buttons = new QHBoxLayout;
    stacks_->setToolTip(tr("The Stacks tab at the oom event: who held the memory, by call stack, and the live tensors"));
    buttons->addWidget(stacks_);
    buttons->addStretch(1);
    d->addLayout(buttons);
    connect(stacks_, &QPushButton::clicked, this, [this] {
        if (answer_.event >= 0) emit stacksRequested(answer_.event);
    });

    d->addWidget(sectionTitle(tr("What each config would do at this limit"), details_));
    whatIfNote_->setWordWrap(true);
    d->addWidget(whatIfNote_);
    whatIfTable_->setModel(whatIfModel_);
    whatIfTable_->verticalHeader()->hide();
    whatIfTable_->setSelectionBehavior(QAbstractItemView::SelectRows);
    whatIfTable_->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);  // as tall as its rows: the page scrolls
    whatIfTable_->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    whatIfTable_->setWordWrap(true);
    whatIfTable_->horizontalHeader()->setStretchLastSection(true);
    whatIfTable_->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    d->addWidget(whatIfTable_);

    d->addWidget(sectionTitle(tr("Who held the memory at the failure"), details_));
    holders_->setColumnCount(4);
    holders_->setHeaderLabels({tr("Size"), tr("Requested"), tr("Address"), tr("Allocated at")});
    holders_->headerItem()->setToolTip(0, tr("Block bytes (what reserved memory holds for it)"));
    holders_->headerItem()->setToolTip(3, tr("The innermost user frame of the stack that allocated it; expand the row for the whole stack"));
    holders_->setRootIsDecorated(true);
    holders_->setUniformRowHeights(true);
    holders_->header()->setStretchLastSection(true);
    holders_->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    d->addWidget(holders_);
    holdersNote_->setWordWrap(true);
    holdersNote_->setForegroundRole(QPalette::PlaceholderText);
    d->addWidget(holdersNote_);

    auto* messageTitle = new QHBoxLayout;
    messageTitle->addWidget(sectionTitle(tr("PyTorch's message"), details_));
    messageTitle->addStretch(1);
    copy_->setToolTip(tr("Copy the message as PyTorch printed it"));
    messageTitle->addWidget(copy_);
    d->addLayout(messageTitle);
    message_->setReadOnly(true);
    message_->setLineWrapMode(QPlainTextEdit::WidgetWidth);  // one long line in PyTorch's text: wrapped, not scrolled
    message_->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    d->addWidget(message_);
    connect(copy_, &QPushButton::clicked, this, [this] {
        if (QClipboard* clipboard = QApplication::clipboard()) clipboard->setText(answer_.pytorchMessage);
    });

    applyFonts();
    showStatus(QString());
}

void OomAnswerView::applyFonts() {
    QFont big = font();
    big.setPointSizeF(big.pointSizeF() * 1.5);
    big.setBold(true);
    headline_->setFont(big);
    QFont mono = MonospaceFont::font();
    mono.setPointSizeF(font().pointSizeF());
    message_->setFont(mono);
    const QFontMetrics metrics(mono);
    message_->setFixedHeight(metrics.lineSpacing() * kMessageLines + 2 * message_->frameWidth() + 8);
}

QPair<QString, QString> OomAnswerView::splitHeadline(const QString& headline) {
    const qsizetype cut = headline.indexOf(QStringLiteral("; "));
    if (cut < 0) return {headline, QString()};
    QString note = headline.mid(cut + 2);
    if (!note.isEmpty()) note[0] = note[0].toUpper();
    return {headline.left(cut), note};
}

QString OomAnswerView::limitText(const OomLimit& limit) {
    if (!limit.known()) return tr("not known");
    QString text = limit.isInterval() ? tr("between %1 and %2").arg(Formatting::bytes(limit.low), Formatting::bytes(limit.high))
                                      : Formatting::bytes(limit.low);
    if (!limit.how.isEmpty()) text += tr(" (%1)").arg(limit.how);
    return text;
}

QString OomAnswerView::verdictText(const OomAnswerData& a) {
    const QString request = Formatting::bytes(a.requestBytes);
    switch (a.verdict) {
        case OomVerdict::Fragmentation:
            return tr("fragmentation: %1 is cached free, more than the %2 requested, but the largest free block is %3")
                .arg(bytesOrUnknown(a.cachedFree), request, bytesOrUnknown(a.largestFree));
        case OomVerdict::ReallyFull:
            return tr("really full: only %1 is cached free in all, less than the %2 requested, and the limit leaves no room for more")
                .arg(bytesOrUnknown(a.cachedFree), request);
        case OomVerdict::Unknown: break;
    }
    return tr("not known (no state at the failure)");
}

QStringList OomAnswerView::facts() const {
    QStringList lines;
    for (const auto& [name, value] : factLabels_) lines << name->text() + QStringLiteral(": ") + value->text();
    return lines;
}

void OomAnswerView::showStatus(const QString& text) {
    status_->setText(text);
    status_->setVisible(!text.isEmpty());
    const bool answered = text.isEmpty() && answer_.run > 0;
    headline_->setVisible(answered);
    headlineNote_->setVisible(answered && !headlineNote_->text().isEmpty());
    subtitle_->setVisible(answered);
    details_->setVisible(answered);
}

void OomAnswerView::setAnswer(const OomAnswerData& answer) {
    answer_ = answer;
    const auto [title, qualifier] = splitHeadline(answer.headline);
    headline_->setText(title);
    headlineNote_->setText(qualifier);
    QStringList sub;
    sub << tr("Run %1: %2").arg(answer.run).arg(answer.runName);
    sub << (answer.config.isEmpty() ? tr("default config") : answer.config);
    if (answer.oomCount > 1) sub << tr("%1 in the run; this is the first").arg(Formatting::counted(answer.oomCount, tr("OOM"), tr("OOMs")));
    subtitle_->setText(sub.join(QStringLiteral(" · ")));

    QString request = tr("%1 on %2").arg(Formatting::bytes(answer.requestBytes), streamText(answer.stream));
    if (answer.op >= 0) request += tr(", at op %1").arg(Formatting::count(answer.op));
    if (answer.event >= 0) request += tr(" (event %1)").arg(Formatting::count(answer.event));
    const QStringList values{request,
                             limitText(answer.limit),
                             bytesOrUnknown(answer.reserved),
                             bytesOrUnknown(answer.allocated),
                             bytesOrUnknown(answer.cachedFree),
                             bytesOrUnknown(answer.largestFree),
                             verdictText(answer)};
    for (int i = 0; i < factLabels_.size(); ++i) factLabels_[i].second->setText(values[i]);
    bar_->setAnswer(answer);
    stacks_->setEnabled(answer.event >= 0);

    whatIfModel_->setRows(answer.whatIf);
    // The interval column only where some answer depends on the limit; when none does, one line
    // says so (the common case, and the table keeps its room for the numbers).
    const bool depends = std::any_of(answer.whatIf.begin(), answer.whatIf.end(), [](const OomWhatIfRow& r) { return !r.holdsOverInterval; });
    whatIfTable_->setColumnHidden(OomWhatIfModel::IntervalColumn, !answer.limit.isInterval() || !depends);
    QString note = answer.whatIfNote;
    if (note.isEmpty() && !answer.whatIf.empty() && answer.limit.isInterval() && !depends) {
        note = tr("Each config's answer is the same at every limit of the interval (%1 – %2).")
                   .arg(Formatting::bytes(answer.limit.low), Formatting::bytes(answer.limit.high));
    }
    whatIfNote_->setText(note);
    whatIfNote_->setVisible(!note.isEmpty());
    whatIfTable_->setVisible(!answer.whatIf.empty());
    whatIfTable_->resizeColumnsToContents();
    // A config of four options is ~100 characters: wrapped at its commas rather than pushing the
    // answer columns out of sight.
    // Never narrower than its longest option (bold: the rows without an OOM), which cannot wrap.
    QFont bold = whatIfTable_->font();
    bold.setBold(true);
    const QFontMetrics boldMetrics(bold);
    int widestOption = 0;
    for (const OomWhatIfRow& row : answer.whatIf) {
        for (const QString& option : OomWhatIfModel::configLabel(row).split(QLatin1Char(' ')))
            widestOption = std::max(widestOption, boldMetrics.horizontalAdvance(option));
    }
    whatIfTable_->setColumnWidth(OomWhatIfModel::ConfigColumn,
                                 std::min(whatIfTable_->columnWidth(OomWhatIfModel::ConfigColumn),
                                          std::max(widestOption + 16, fontMetrics().averageCharWidth() * kConfigChars)));
    if (answer.limit.isInterval()) {
        whatIfTable_->setColumnWidth(OomWhatIfModel::IntervalColumn, std::min(whatIfTable_->columnWidth(OomWhatIfModel::IntervalColumn),
                                                                               fontMetrics().averageCharWidth() * kIntervalChars));
    }
    whatIfTable_->resizeRowsToContents();  // one text line a row (two for a long config), not the style's taller default
    fitTableHeight();

    holders_->clear();
    for (const OomHolderRow& h : answer.holders) {
        auto* item = new QTreeWidgetItem(holders_);
        item->setText(0, Formatting::bytes(h.size));
        item->setText(1, Formatting::bytes(h.requested));
        item->setText(2, Formatting::address(h.address));
        item->setText(3, h.topFrame.isEmpty() ? tr("(no stack recorded)") : h.topFrame);
        item->setTextAlignment(0, Qt::AlignRight | Qt::AlignVCenter);
        item->setTextAlignment(1, Qt::AlignRight | Qt::AlignVCenter);
        item->setToolTip(3, h.stack.join(QLatin1Char('\n')));
        for (const QString& frame : h.stack) {
            auto* child = new QTreeWidgetItem(item);
            child->setText(3, frame);
        }
    }
    for (int c = 0; c < 3; ++c) holders_->resizeColumnToContents(c);
    holders_->setVisible(!answer.holders.empty());
    // Room for the listed rows (ten at most) and one more line, so an expanded stack shows a frame
    // before the list scrolls inside itself.
    const int shown = static_cast<int>(std::min<std::size_t>(answer.holders.size(), kHolderRowsShown)) + 1;
    const int rowHeight = answer.holders.empty() ? 0 : holders_->sizeHintForRow(0);
    holders_->setFixedHeight(holders_->header()->sizeHint().height() + shown * std::max(rowHeight, fontMetrics().height() + 4) +
                             2 * holders_->frameWidth() + 2);
    note.clear();
    if (answer.holders.empty()) note = tr("No live block at the failure.");
    if (answer.holdersOmitted > 0) {
        const QString more = Formatting::counted(answer.holdersOmitted, tr("block"), tr("blocks"));
        note = answer.holdersOmittedBytes > 0
                   ? tr("and %1 more (%2), smaller; the Stacks tab shows them all").arg(more, Formatting::bytes(answer.holdersOmittedBytes))
                   : tr("and %1 more, smaller; the Stacks tab shows them all").arg(more);
    }
    holdersNote_->setText(note);
    holdersNote_->setVisible(!note.isEmpty());

    message_->setPlainText(answer.pytorchMessage.isEmpty() ? tr("(PyTorch's message is not known for this run)") : answer.pytorchMessage);
    copy_->setEnabled(!answer.pytorchMessage.isEmpty());
    showStatus(QString());
}

void OomAnswerView::fitTableHeight() {
    // As tall as its rows (a dozen configs at most), so the page, not the table, scrolls.
    int height = whatIfTable_->horizontalHeader()->sizeHint().height() + 2 * whatIfTable_->frameWidth();
    for (int r = 0; r < whatIfModel_->rowCount(); ++r) height += whatIfTable_->rowHeight(r);
    height += whatIfTable_->style()->pixelMetric(QStyle::PM_ScrollBarExtent);  // room for the bar a narrow window shows
    whatIfTable_->setFixedHeight(height);
}

void OomAnswerView::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange) applyFonts();
}

}  // namespace allocscope::views
