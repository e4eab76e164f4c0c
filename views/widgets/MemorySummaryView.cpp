#include "views/widgets/MemorySummaryView.h"


#include <QHeaderView>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

#include "views/util/MonospaceFont.h"
#include "views/widgets/SummaryTableModel.h"

namespace allocscope::views {

MemorySummaryView::MemorySummaryView(QWidget* parent)
    : QWidget(parent), tabs_(new QTabWidget(this)), table_(new QTableView(this)), text_(new QPlainTextEdit(this)),
      model_(new SummaryTableModel(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(tabs_);

    table_->setModel(model_);
    table_->verticalHeader()->hide();
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setAlternatingRowColors(true);
    table_->setWordWrap(false);
    table_->horizontalHeader()->setSectionResizeMode(SummaryTableModel::MetricColumn, QHeaderView::Stretch);
    for (int c = SummaryTableModel::CurrentColumn; c < SummaryTableModel::NUM_COLUMNS; ++c)
        table_->horizontalHeader()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
    table_->setToolTip(tr("memory_stats() at the current event: current and peak values, cumulative totals"));

    text_->setReadOnly(true);
    text_->setLineWrapMode(QPlainTextEdit::NoWrap);
    text_->setFont(MonospaceFont::font());
    text_->setToolTip(tr("torch.cuda.memory_summary() at the current event, as PyTorch prints it"));

    tabs_->addTab(table_, tr("Summary"));
    tabs_->addTab(text_, tr("memory_summary()"));
    tabs_->setDocumentMode(true);
}

void MemorySummaryView::setData(const SummaryTableData& input) {
    model_->resetData(input.rows, input.windowNote);
    // Keep the reading position when stepping through events: the text has the same shape.
    const int scroll = text_->verticalScrollBar() ? text_->verticalScrollBar()->value() : 0;
    text_->setPlainText(input.text);
    if (text_->verticalScrollBar()) text_->verticalScrollBar()->setValue(scroll);
}

bool MemorySummaryView::isTextShown() const { return tabs_->currentWidget() == text_; }
void MemorySummaryView::showTable() { tabs_->setCurrentWidget(table_); }
void MemorySummaryView::showText() { tabs_->setCurrentWidget(text_); }

}  // namespace allocscope::views
