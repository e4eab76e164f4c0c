#pragma once
// The Compare tab's content: grouped bar charts (one small chart per metric, one bar per config
// in the config's colour), a table of the same numbers, the reserved timelines of every config
// overlaid (x = program op), and side-by-side segment maps at one program op chosen with an op
// selector. Fed with CompareData / CompareMaps; asks for maps through mapsRequested(op).
#include <QWidget>

#include <array>
#include <vector>

#include "views/data/CompareData.h"

class QLabel;
class QScrollArea;
class QSpinBox;
class QSlider;
class QTabWidget;
class QTableView;
class QHBoxLayout;

namespace allocscope::views {

class CompareBarChart;
class LegendWidget;
class CompareTableModel;
class CompareTimelineChart;
class SegmentMapWidget;

class CompareWidget : public QWidget {
    Q_OBJECT
public:
    explicit CompareWidget(QWidget* parent = nullptr);

    void setData(CompareData data);
    const CompareData& data() const { return data_; }
    // The maps for op `maps.op`; ignored unless that is the selected op.
    void setMaps(CompareMaps maps);
    qint64 currentOp() const;

    CompareBarChart* barChart(CompareMetric metric) const { return bars_[static_cast<std::size_t>(metric)]; }
    CompareTableModel* tableModel() const { return model_; }
    QTableView* tableView() const { return table_; }
    CompareTimelineChart* timelineChart() const { return timeline_; }
    // One per run, in run order (an async-backend run has a map widget that stays hidden behind
    // a note saying why).
    SegmentMapWidget* segmentMap(int runIndex) const;
    QLabel* mapNote(int runIndex) const;
    QTabWidget* tabs() const { return tabs_; }
    QWidget* chartsPage() const { return chartsPage_; }
    LegendWidget* legend() const { return legend_; }

    // File ▸ Export.
    QString tableCsv() const;

public slots:
    // Moves the op selector (negative: the last op); emits mapsRequested when it changes.
    void setCurrentOp(qint64 op);

signals:
    void mapsRequested(qint64 op);
    void opChanged(qint64 op);  // the user moved the op selector

protected:
    void changeEvent(QEvent* event) override;

private:
    void rebuildMaps();
    void syncOpControls(qint64 op);

    CompareData data_;
    QTabWidget* tabs_ = nullptr;
    QWidget* chartsPage_ = nullptr;
    QLabel* title_ = nullptr;
    LegendWidget* legend_ = nullptr;
    std::array<CompareBarChart*, kCompareMetricCount> bars_{};
    CompareTableModel* model_ = nullptr;
    QTableView* table_ = nullptr;
    CompareTimelineChart* timeline_ = nullptr;
    QSlider* opSlider_ = nullptr;
    QSpinBox* opSpin_ = nullptr;
    QWidget* mapsHost_ = nullptr;
    QHBoxLayout* mapsLayout_ = nullptr;
    std::vector<QWidget*> columns_;
    std::vector<SegmentMapWidget*> maps_;
    std::vector<QLabel*> mapTitles_;
    std::vector<QLabel*> mapNotes_;
    qint64 op_ = -1;
};

}  // namespace allocscope::views
