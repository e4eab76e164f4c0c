#include "views/widgets/CompareWidget.h"

#include <QEvent>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QScrollArea>
#include <QSlider>
#include <QSpinBox>
#include <QSplitter>
#include <QStringList>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

#include "views/util/Formatting.h"
#include "views/charts/CompareBarChart.h"
#include "views/charts/CompareColors.h"
#include "views/charts/CompareTimelineChart.h"
#include "views/theme/ThemePalette.h"
#include "views/widgets/CompareTableModel.h"
#include "views/widgets/LegendWidget.h"
#include "views/widgets/SegmentMapWidget.h"

namespace allocscope::views {

CompareWidget::CompareWidget(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(4);
    title_ = new QLabel(this);
    title_->setTextFormat(Qt::PlainText);
    title_->setWordWrap(true);
    title_->setToolTip(tr("The program every config ran (runs are aligned by program op)"));
    legend_ = new LegendWidget(this);
    legend_->setToolTip(tr("One colour per config, the same in every chart, the table and the segment maps"));
    layout->addWidget(title_);
    layout->addWidget(legend_);

    tabs_ = new QTabWidget(this);
    tabs_->setDocumentMode(true);
    layout->addWidget(tabs_, 1);

    // Charts: one small bar chart per number, three by two (fits a 1280x720 window).
    chartsPage_ = new QWidget(tabs_);
    auto* grid = new QGridLayout(chartsPage_);
    grid->setContentsMargins(2, 2, 2, 2);
    grid->setSpacing(4);
    for (int m = 0; m < kCompareMetricCount; ++m) {
        auto* chart = new CompareBarChart(static_cast<CompareMetric>(m), chartsPage_);
        bars_[static_cast<std::size_t>(m)] = chart;
        grid->addWidget(chart, m / 3, m % 3);
    }
    tabs_->addTab(chartsPage_, tr("&Charts"));
    tabs_->setTabToolTip(0, tr("Peak reserved, waste, cudaMalloc calls, retries, OOMs and estimated allocator time, "
                               "one bar per config"));

    // Table: the same numbers.
    model_ = new CompareTableModel(this);
    table_ = new QTableView(tabs_);
    table_->setModel(model_);
    table_->setSortingEnabled(false);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setAlternatingRowColors(true);
    table_->verticalHeader()->setVisible(false);
    table_->horizontalHeader()->setStretchLastSection(false);
    table_->horizontalHeader()->setSectionResizeMode(CompareTableModel::ConfigColumn, QHeaderView::Stretch);
    table_->setToolTip(tr("The compared numbers per config (File ▸ Export writes them as CSV)"));
    tabs_->addTab(table_, tr("&Table"));
    tabs_->setTabToolTip(1, tr("The numbers of the charts as a table"));

    // Timelines and side-by-side maps share the op: the timeline picks it, the maps show it.
    auto* split = new QSplitter(Qt::Vertical, tabs_);
    timeline_ = new CompareTimelineChart(split);
    auto* mapsPage = new QWidget(split);
    auto* mapsLayout = new QVBoxLayout(mapsPage);
    mapsLayout->setContentsMargins(2, 2, 2, 2);
    mapsLayout->setSpacing(2);
    auto* opRow = new QHBoxLayout();
    auto* opLabel = new QLabel(tr("Segment maps at program &op:"), mapsPage);
    opSlider_ = new QSlider(Qt::Horizontal, mapsPage);
    opSlider_->setToolTip(tr("The program op at which the segment maps below show every config's layout"));
    opSpin_ = new QSpinBox(mapsPage);
    opSpin_->setToolTip(tr("The program op at which the segment maps show every config's layout"));
    opSpin_->setKeyboardTracking(false);
    opSpin_->setAccelerated(true);
    opLabel->setBuddy(opSpin_);
    opRow->addWidget(opLabel);
    opRow->addWidget(opSlider_, 1);
    opRow->addWidget(opSpin_);
    mapsLayout->addLayout(opRow);
    mapsHost_ = new QWidget(mapsPage);
    mapsLayout_ = new QHBoxLayout(mapsHost_);
    mapsLayout_->setContentsMargins(0, 0, 0, 0);
    mapsLayout_->setSpacing(6);
    mapsLayout->addWidget(mapsHost_, 1);
    split->addWidget(timeline_);
    split->addWidget(mapsPage);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 3);
    split->setSizes({260, 390});
    split->setChildrenCollapsible(false);
    tabs_->addTab(split, tr("Timeline && &maps"));
    tabs_->setTabToolTip(2, tr("Reserved memory of every config over the program, and their segment maps side by side "
                               "at one op"));

    connect(opSlider_, &QSlider::valueChanged, this, [this](int v) {
        if (v != op_) {
            syncOpControls(v);
            emit opChanged(op_);
            emit mapsRequested(op_);
        }
    });
    connect(opSpin_, qOverload<int>(&QSpinBox::valueChanged), this, [this](int v) {
        if (v != op_) {
            syncOpControls(v);
            emit opChanged(op_);
            emit mapsRequested(op_);
        }
    });
    connect(timeline_, &CompareTimelineChart::opRequested, this, [this](qint64 op) {
        if (op != op_) {
            syncOpControls(op);
            emit opChanged(op_);
            emit mapsRequested(op_);
        }
    });
    setData({});
}

void CompareWidget::setData(CompareData data) {
    data_ = std::move(data);
    const Theme theme = ThemePalette::forPalette(palette()).theme;
    QString title = data_.program;
    if (title.isEmpty()) title = tr("No comparison yet: pick a workload and configs, then Compare.");
    else title += QStringLiteral(" — ") + Formatting::counted(data_.opCount, tr("op"), tr("ops"));
    // A window's figures are marked "(window)" in the table and the charts; the note says why once.
    if (!data_.windowNote.isEmpty()) title += QLatin1Char('\n') + data_.windowNote;
    title_->setText(title);
    QVector<LegendEntry> entries;
    for (std::size_t i = 0; i < data_.runs.size(); ++i) {
        const CompareRun& r = data_.runs[i];
        entries.append({r.label, CompareColors::forRun(static_cast<int>(i), theme),
                        r.configText.isEmpty() ? tr("PyTorch's defaults") : r.configText});
    }
    legend_->setEntries(entries);
    for (CompareBarChart* chart : bars_) chart->setRuns(data_.runs, data_.windowNote);
    model_->setTheme(theme);
    model_->setRuns(data_.runs, data_.windowNote);
    table_->resizeColumnsToContents();
    timeline_->setRuns(data_.runs, data_.opCount);
    const int maxOp = static_cast<int>(std::clamp<qint64>(data_.opCount - 1, 0, INT_MAX));
    {
        const QSignalBlocker b1(opSlider_);
        const QSignalBlocker b2(opSpin_);
        opSlider_->setRange(0, maxOp);
        opSpin_->setRange(0, maxOp);
        opSlider_->setPageStep(std::max(1, maxOp / 20));
    }
    rebuildMaps();
    if (op_ > maxOp) op_ = maxOp;
    if (op_ < 0 && data_.opCount > 0) op_ = maxOp;  // the end of the program until told otherwise
    syncOpControls(op_);
}

qint64 CompareWidget::currentOp() const { return op_; }

void CompareWidget::setCurrentOp(qint64 op) {
    // Negative: the end of the program (the default view).
    if (op < 0) op = data_.opCount - 1;
    op = std::clamp<qint64>(op, 0, std::max<qint64>(0, data_.opCount - 1));
    if (op == op_) return;
    syncOpControls(op);
    emit mapsRequested(op_);
}

void CompareWidget::syncOpControls(qint64 op) {
    op_ = op;
    const QSignalBlocker b1(opSlider_);
    const QSignalBlocker b2(opSpin_);
    if (op >= 0) {
        opSlider_->setValue(static_cast<int>(op));
        opSpin_->setValue(static_cast<int>(op));
    }
    timeline_->setCurrentOp(op);
}

void CompareWidget::rebuildMaps() {
    for (QWidget* w : columns_) delete w;
    columns_.clear();
    maps_.clear();
    mapTitles_.clear();
    mapNotes_.clear();
    const Theme theme = ThemePalette::forPalette(palette()).theme;
    for (std::size_t i = 0; i < data_.runs.size(); ++i) {
        const CompareRun& r = data_.runs[i];
        auto* column = new QWidget(mapsHost_);
        auto* v = new QVBoxLayout(column);
        v->setContentsMargins(0, 0, 0, 0);
        v->setSpacing(2);
        auto* title = new QLabel(column);
        title->setTextFormat(Qt::PlainText);
        title->setText(r.run > 0 ? tr("■ %1  (run %2)").arg(r.label).arg(r.run) : tr("■ %1").arg(r.label));
        QPalette pal = title->palette();
        pal.setColor(QPalette::WindowText, CompareColors::forRun(static_cast<int>(i), theme));
        title->setPalette(pal);
        title->setToolTip(r.configText.isEmpty() ? tr("PyTorch's defaults") : r.configText);
        auto* map = new SegmentMapWidget(column);
        auto* note = new QLabel(column);
        note->setWordWrap(true);
        note->setAlignment(Qt::AlignCenter);
        note->setText(r.noMapReason.isEmpty() ? tr("Loading…") : r.noMapReason);
        note->setToolTip(note->text());
        map->setVisible(false);
        v->addWidget(title);
        v->addWidget(map, 1);
        v->addWidget(note, 1);
        mapsLayout_->addWidget(column, 1);
        columns_.push_back(column);
        maps_.push_back(map);
        mapTitles_.push_back(title);
        mapNotes_.push_back(note);
    }
}

void CompareWidget::setMaps(CompareMaps maps) {
    if (maps.op != op_) return;  // an answer to an op the user has already left
    for (std::size_t i = 0; i < maps_.size(); ++i) {
        const CompareRun& r = data_.runs[i];
        const bool has = i < maps.maps.size() && maps.maps[i].has_value();
        if (has) {
            maps_[i]->setData(std::move(*maps.maps[i]));
        } else {
            mapNotes_[i]->setText(r.noMapReason.isEmpty() ? tr("No state at op %1.").arg(maps.op) : r.noMapReason);
        }
        maps_[i]->setVisible(has);
        mapNotes_[i]->setVisible(!has);
    }
}

SegmentMapWidget* CompareWidget::segmentMap(int runIndex) const {
    if (runIndex < 0 || runIndex >= static_cast<int>(maps_.size())) return nullptr;
    return maps_[static_cast<std::size_t>(runIndex)];
}

QLabel* CompareWidget::mapNote(int runIndex) const {
    if (runIndex < 0 || runIndex >= static_cast<int>(mapNotes_.size())) return nullptr;
    return mapNotes_[static_cast<std::size_t>(runIndex)];
}

QString CompareWidget::tableCsv() const { return model_->toCsv(); }

void CompareWidget::changeEvent(QEvent* event) {
    if (event->type() == QEvent::PaletteChange) {
        const Theme theme = ThemePalette::forPalette(palette()).theme;
        QVector<LegendEntry> entries = legend_->entries();
        for (int i = 0; i < entries.size(); ++i) entries[i].color = CompareColors::forRun(i, theme);
        legend_->setEntries(entries);
        model_->setTheme(theme);
        for (std::size_t i = 0; i < mapTitles_.size(); ++i) {
            QPalette pal = mapTitles_[i]->palette();
            pal.setColor(QPalette::WindowText, CompareColors::forRun(static_cast<int>(i), theme));
            mapTitles_[i]->setPalette(pal);
        }
    }
    QWidget::changeEvent(event);
}

}  // namespace allocscope::views
