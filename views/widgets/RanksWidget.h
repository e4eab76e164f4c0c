#pragma once
// The Ranks tab: the session's runs as ranks of one distributed job, in a sortable table with
// the outliers tinted (an OOM; peak reserved more than the threshold above the median rank), a
// line naming the median rank, and the threshold control. Clicking a row (or Return on it) asks
// to open that run beside the median rank in Compare (runActivated).
#include <QWidget>

#include "views/data/RanksData.h"

class QDoubleSpinBox;
class QLabel;
class QSortFilterProxyModel;
class QTableView;

namespace allocscope::views {

class RanksTableModel;

class RanksWidget : public QWidget {
    Q_OBJECT
public:
    explicit RanksWidget(QWidget* parent = nullptr);

    void setData(RanksData data);  // keeps the sort order
    const RanksData& data() const;
    double threshold() const;      // a share (0.10 = 10%)
    void setThreshold(double share);
    RanksTableModel* model() const { return model_; }
    QTableView* view() const { return view_; }
    QDoubleSpinBox* thresholdBox() const { return threshold_; }
    QLabel* summaryLabel() const { return summary_; }

signals:
    void runActivated(int run);
    void thresholdChanged(double share);

private:
    void updateSummary();
    RanksTableModel* model_;
    QSortFilterProxyModel* proxy_;
    QTableView* view_;
    QLabel* summary_;
    QDoubleSpinBox* threshold_;
};

}  // namespace allocscope::views
