#pragma once
// The Allocations tab: the plot (AllocationsPlot) under a row of controls -- Detail (how many of
// the largest allocations are drawn one by one), a line saying what is drawn, and Whole run.
// The Detail choice is remembered (QSettings "allocations/detail").
#include <QWidget>

#include "views/data/AllocationsData.h"

class QComboBox;
class QLabel;
class QPushButton;

namespace allocscope::views {

class AllocationsPlot;

class AllocationsWidget : public QWidget {
    Q_OBJECT
public:
    explicit AllocationsWidget(QWidget* parent = nullptr);

    void setData(AllocationsData input);
    // While the run's allocations are being ranked (an older session): a message instead.
    void showLoading(const QString& message);
    void setCurrentEvent(qint64 event);
    AllocationsPlot* plot() const { return plot_; }
    QComboBox* detailBox() const { return detail_; }
    QLabel* infoLabel() const { return info_; }

signals:
    void eventRequested(qint64 event);
    void blockRequested(quint64 address, qint64 event);

private:
    void updateInfo();

    AllocationsPlot* plot_;
    QComboBox* detail_;
    QLabel* info_;
    QPushButton* whole_;
};

}  // namespace allocscope::views
