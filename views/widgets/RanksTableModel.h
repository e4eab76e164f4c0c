#pragma once
// The Ranks tab's table: one row per run (rank, run, name, peaks, fragmentation at the peak,
// retries, OOMs, verdict, how far above the median). Outlier rows are tinted and say why in
// their tooltip; SortRole holds raw numbers so sorting by a byte column sorts by bytes.
#include <QAbstractTableModel>

#include "views/data/RanksData.h"

namespace allocscope::views {

class RanksTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        RankColumn = 0,
        RunColumn,
        PeakReservedColumn,
        AboveMedianColumn,
        OomsColumn,
        RetriesColumn,
        PeakAllocatedColumn,
        FragmentationColumn,
        VerdictColumn,
        NameColumn,
        NUM_COLUMNS
    };
    enum Roles { SortRole = Qt::UserRole + 1, RunNumberRole, OutlierRole };

    explicit RanksTableModel(QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    int columnCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    void setRanks(RanksData data);
    const RanksData& ranks() const { return data_; }
    // Why a row is flagged ("" when it is not).
    QString outlierReason(const RankRowData& row) const;

private:
    QVariant display(const RankRowData& row, int column) const;
    QVariant raw(const RankRowData& row, int column) const;
    RanksData data_;
};

}  // namespace allocscope::views
