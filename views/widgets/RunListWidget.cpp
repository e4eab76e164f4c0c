#include "views/widgets/RunListWidget.h"

#include <QHeaderView>
#include <algorithm>
#include <QItemSelectionModel>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

#include "views/widgets/RunListModel.h"

namespace allocscope::views {

RunListWidget::RunListWidget(QWidget* parent)
    : QWidget(parent), model_(new RunListModel(this)), proxy_(new QSortFilterProxyModel(this)), view_(new QTableView(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(view_);
    proxy_->setSourceModel(model_);
    proxy_->setSortRole(RunListModel::SortRole);
    view_->setModel(proxy_);
    view_->setSortingEnabled(true);
    view_->sortByColumn(RunListModel::NumberColumn, Qt::AscendingOrder);
    view_->setSelectionBehavior(QAbstractItemView::SelectRows);
    view_->setSelectionMode(QAbstractItemView::ExtendedSelection);
    view_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    view_->verticalHeader()->hide();
    view_->verticalHeader()->setDefaultSectionSize(view_->fontMetrics().height() + 6);
    view_->setAlternatingRowColors(true);
    view_->setWordWrap(false);
    // A long name loses its middle, not its end: "fragmentat…segments:True" still tells the
    // configs apart. The whole name is in the row's tooltip.
    view_->setTextElideMode(Qt::ElideMiddle);
    view_->horizontalHeader()->setStretchLastSection(true);
    view_->setToolTip(tr("Runs of this session. Select one to show it; select several and press Compare "
                         "in the Compare tab to put them side by side."));
    view_->setAccessibleName(tr("Runs"));
    connect(view_->selectionModel(), &QItemSelectionModel::selectionChanged, this, &RunListWidget::onSelectionChanged);
    connect(view_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, &RunListWidget::onSelectionChanged);
}

void RunListWidget::setRuns(RunListData runs) {
    const int keep = selected_;
    quiet_ = true;
    model_->setRuns(std::move(runs));
    view_->resizeColumnsToContents();
    // Names like "fragmentation-101 · expandable_segments:True" would push the Verdict column
    // out of the dock's width: the name column stops at kNameColumnChars characters.
    const int nameCap = view_->fontMetrics().horizontalAdvance(QLatin1Char('x')) * kNameColumnChars;
    if (view_->columnWidth(RunListModel::NameColumn) > nameCap) view_->setColumnWidth(RunListModel::NameColumn, nameCap);
    quiet_ = false;
    selected_ = -1;
    if (keep >= 0 && model_->rowOfRun(keep) >= 0) {
        quiet_ = true;
        selectRun(keep);
        quiet_ = false;
        selected_ = keep;
    }
}

int RunListWidget::selectedRun() const { return selected_; }

QList<int> RunListWidget::selectedRuns() const {
    QList<int> runs;
    const QModelIndexList rows = view_->selectionModel()->selectedRows();
    QList<int> proxyRows;
    for (const QModelIndex& index : rows) proxyRows << index.row();
    std::sort(proxyRows.begin(), proxyRows.end());
    for (int row : proxyRows) runs << proxy_->index(row, 0).data(RunListModel::RunNumberRole).toInt();
    return runs;
}

void RunListWidget::selectRun(int number) {
    const int sourceRow = model_->rowOfRun(number);
    if (sourceRow < 0) return;
    const QModelIndex index = proxy_->mapFromSource(model_->index(sourceRow, 0));
    view_->selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    view_->scrollTo(index);
}

void RunListWidget::onSelectionChanged() {
    const QModelIndex current = view_->selectionModel()->currentIndex();
    const int number = current.isValid() ? current.data(RunListModel::RunNumberRole).toInt() : -1;
    if (number == selected_ || number < 0) return;
    selected_ = number;
    if (!quiet_) emit runSelected(number);
}

}  // namespace allocscope::views
