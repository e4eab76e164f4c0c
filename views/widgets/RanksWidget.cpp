#include "views/widgets/RanksWidget.h"

#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QShortcut>
#include <QLabel>
#include <QSignalBlocker>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

#include "views/util/Formatting.h"
#include "views/widgets/RanksTableModel.h"

namespace allocscope::views {

RanksWidget::RanksWidget(QWidget* parent)
    : QWidget(parent), model_(new RanksTableModel(this)), proxy_(new QSortFilterProxyModel(this)), view_(new QTableView(this)),
      summary_(new QLabel(this)), threshold_(new QDoubleSpinBox(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    // The summary gets the whole width (it wraps in a narrow window); the threshold goes under it.
    summary_->setWordWrap(true);
    summary_->setTextFormat(Qt::PlainText);
    layout->addWidget(summary_);
    auto* top = new QHBoxLayout;
    auto* label = new QLabel(tr("Flag peak reserved more than"), this);
    threshold_->setRange(0.0, 1000.0);
    threshold_->setDecimals(1);
    threshold_->setSingleStep(5.0);
    threshold_->setSuffix(tr(" % above the median"));
    threshold_->setValue(10.0);
    threshold_->setAccelerated(true);
    threshold_->setToolTip(tr("A rank is an outlier when it ran out of memory, or when its peak reserved memory is more "
                              "than this share above the median rank's"));
    label->setBuddy(threshold_);
    top->addWidget(label);
    top->addWidget(threshold_);
    top->addStretch(1);
    layout->addLayout(top);
    layout->addWidget(view_, 1);

    proxy_->setSourceModel(model_);
    proxy_->setSortRole(RanksTableModel::SortRole);
    view_->setModel(proxy_);
    view_->setSortingEnabled(true);
    view_->sortByColumn(RanksTableModel::RankColumn, Qt::AscendingOrder);
    view_->setSelectionBehavior(QAbstractItemView::SelectRows);
    view_->setSelectionMode(QAbstractItemView::SingleSelection);
    view_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    view_->verticalHeader()->hide();
    view_->verticalHeader()->setDefaultSectionSize(view_->fontMetrics().height() + 6);
    view_->setWordWrap(false);
    view_->horizontalHeader()->setStretchLastSection(true);
    view_->setAccessibleName(tr("Ranks"));
    view_->setToolTip(tr("One row per run (rank). Tinted rows are outliers: red ran out of memory, amber peaked far above "
                         "the median rank. Click a row to open it beside the median rank in Compare."));
    connect(view_, &QTableView::clicked, this, [this](const QModelIndex& index) {
        if (index.isValid()) emit runActivated(index.data(RanksTableModel::RunNumberRole).toInt());
    });
    // The keyboard's click (activated would also fire on a double click, after clicked).
    for (const QKeySequence& key : {QKeySequence(Qt::Key_Return), QKeySequence(Qt::Key_Enter)}) {
        auto* shortcut = new QShortcut(key, view_);
        shortcut->setContext(Qt::WidgetShortcut);
        connect(shortcut, &QShortcut::activated, this, [this] {
            const QModelIndex index = view_->currentIndex();
            if (index.isValid()) emit runActivated(index.data(RanksTableModel::RunNumberRole).toInt());
        });
    }
    connect(threshold_, &QDoubleSpinBox::valueChanged, this, [this](double percent) { emit thresholdChanged(percent / 100.0); });
    updateSummary();
}

void RanksWidget::setData(RanksData data) {
    {
        const QSignalBlocker block(threshold_);
        threshold_->setValue(data.threshold * 100.0);
    }
    model_->setRanks(std::move(data));
    view_->resizeColumnsToContents();
    updateSummary();
}

const RanksData& RanksWidget::data() const { return model_->ranks(); }

double RanksWidget::threshold() const { return threshold_->value() / 100.0; }

void RanksWidget::setThreshold(double share) { threshold_->setValue(share * 100.0); }

void RanksWidget::updateSummary() {
    const RanksData& d = model_->ranks();
    if (d.rows.empty()) {
        summary_->setText(tr("No runs. Open several snapshots of a distributed job (File ▸ Open… with several files, or "
                             "File ▸ Open Folder…) to compare its ranks."));
        return;
    }
    int outliers = 0;
    int ranked = 0;
    QString median;
    for (const RankRowData& row : d.rows) {
        outliers += row.outlier() ? 1 : 0;
        ranked += row.rank >= 0 ? 1 : 0;
        if (row.run.number == d.medianRun) {
            median = row.rank >= 0 ? tr("rank %1 (run %2)").arg(row.rank).arg(row.run.number) : tr("run %1").arg(row.run.number);
        }
    }
    const int runs = static_cast<int>(d.rows.size());
    QString text = (runs == 1 ? tr("1 run") : tr("%1 runs").arg(runs)) + tr(", %1 with a rank").arg(ranked);
    if (d.medianRun > 0) text += tr(" · median: %1, peak reserved %2").arg(median, Formatting::bytes(d.medianPeakReserved));
    text += outliers == 1 ? tr(" · 1 outlier") : tr(" · %1 outliers").arg(outliers);
    summary_->setText(text);
}

}  // namespace allocscope::views
