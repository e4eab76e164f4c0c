#include "views/widgets/BlockInspectorWidget.h"

#include <QTextBrowser>
#include <QUrl>
#include <QVBoxLayout>

#include "views/util/Formatting.h"

namespace allocscope::views {

BlockInspectorWidget::BlockInspectorWidget(QWidget* parent) : QWidget(parent), browser_(new QTextBrowser(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(browser_);
    browser_->setOpenLinks(false);
    browser_->setToolTip(tr("The selected block: its sizes, the events that allocated and freed it and why, and "
                            "the stack of its allocation. Click an event to move the scrubber there."));
    browser_->setAccessibleName(tr("Block inspector"));
    connect(browser_, &QTextBrowser::anchorClicked, this, [this](const QUrl& url) {
        bool ok = false;
        const qint64 event = url.path().toLongLong(&ok);
        if (url.scheme() == QLatin1String("event") && ok) emit eventRequested(event);
    });
    clear();
}

void BlockInspectorWidget::clear(const QString& hint) {
    data_ = BlockInspectorData{};
    browser_->setHtml(QStringLiteral("<p><i>%1</i></p>")
                          .arg((hint.isEmpty() ? tr("No block selected. Click a block in the segment map (or use the "
                                                    "arrow keys there) to inspect it.")
                                               : hint)
                                   .toHtmlEscaped()));
}

void BlockInspectorWidget::setData(BlockInspectorData data) {
    data_ = std::move(data);
    if (!data_.valid) {
        clear();
        return;
    }
    const auto row = [](const QString& name, const QString& value) {
        return QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>").arg(name.toHtmlEscaped(), value.toHtmlEscaped());
    };
    QString html = QStringLiteral("<h3>Block %1</h3><table cellspacing=2>").arg(Formatting::address(data_.address));
    html += row(tr("State"), data_.state);
    html += row(tr("Size"), QStringLiteral("%1 (%2 B)").arg(Formatting::bytes(data_.size), Formatting::count(static_cast<qint64>(data_.size))));
    if (data_.requested > 0) {
        const quint64 waste = data_.size > data_.requested ? data_.size - data_.requested : 0;
        html += row(tr("Requested"), QStringLiteral("%1 (%2 rounding)").arg(Formatting::bytes(data_.requested), Formatting::bytes(waste)));
    }
    html += row(tr("Stream"), data_.stream == 0 ? tr("0 (default)") : QStringLiteral("0x%1").arg(data_.stream, 0, 16));
    if (data_.segment != 0) html += row(tr("Segment"), Formatting::address(data_.segment));
    if (!data_.pool.isEmpty()) html += row(tr("Pool"), data_.pool);
    if (!data_.memoryPool.isEmpty()) html += row(tr("Memory pool"), data_.memoryPool);
    html += QStringLiteral("</table><h4>%1</h4>").arg(tr("Events"));
    if (data_.events.empty()) html += QStringLiteral("<p><i>%1</i></p>").arg(tr("Never allocated (a free remainder of its segment)."));
    html += QStringLiteral("<ul>");
    for (const InspectorEvent& e : data_.events) {
        html += QStringLiteral("<li><a href=\"event:%1\">%2 at event %3</a> (op %4): %5</li>")
                    .arg(e.seq)
                    .arg(e.action.toHtmlEscaped(), Formatting::count(e.seq), Formatting::count(e.op), e.cause.toHtmlEscaped());
    }
    html += QStringLiteral("</ul><h4>%1</h4>").arg(tr("Stack"));
    if (data_.stack.empty()) {
        html += QStringLiteral("<p><i>%1</i></p>").arg(tr("No stack recorded."));
    } else {
        html += QStringLiteral("<pre>");
        for (const StackFrameText& f : data_.stack) {
            const QString line = f.line ? QString::number(*f.line) : QStringLiteral("?");
            html += QStringLiteral("%1\n    %2:%3\n").arg(f.function.toHtmlEscaped(), f.file.toHtmlEscaped(), line);
        }
        html += QStringLiteral("</pre>");
    }
    browser_->setHtml(html);
}

QString BlockInspectorWidget::plainText() const { return browser_->toPlainText(); }

}  // namespace allocscope::views
