#pragma once
// The session's run list (left dock): a sortable table; selecting a row (click or keyboard)
// emits runSelected with the run's number.
#include <QWidget>

#include "views/data/RunListData.h"

class QSortFilterProxyModel;
class QTableView;

namespace allocscope::views {

class RunListModel;

class RunListWidget : public QWidget {
    Q_OBJECT
public:
    explicit RunListWidget(QWidget* parent = nullptr);

    void setRuns(RunListData runs);  // keeps the selected run selected (without emitting)
    int selectedRun() const;         // -1 = none
    QList<int> selectedRuns() const; // all selected rows' run numbers, in table order
    RunListModel* model() const { return model_; }
    QTableView* view() const { return view_; }
    // The name column is at most this many characters wide (longer names lose their middle).
    static constexpr int kNameColumnChars = 30;

public slots:
    void selectRun(int number);  // emits runSelected when it changes the selection

signals:
    void runSelected(int number);

private:
    void onSelectionChanged();
    RunListModel* model_;
    QSortFilterProxyModel* proxy_;
    QTableView* view_;
    int selected_ = -1;
    bool quiet_ = false;
};

}  // namespace allocscope::views
