#pragma once
// The OOM tab's what-if table: one row per config `recommend` tries, replayed at the inferred
// limit: OOM or not and where it fails (one column: the centre is narrow beside the docks), and --
// when the limit is an interval -- whether that holds over all of it, beside the answer it
// qualifies; then peak reserved and the headroom under the limit. The run's own config is marked;
// rows that avoid the OOM are bold.
#include <QAbstractTableModel>

#include <vector>

#include "views/data/OomAnswerData.h"

namespace allocscope::views {

class OomWhatIfModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { ConfigColumn = 0, OomColumn, IntervalColumn, PeakReservedColumn, HeadroomColumn, NUM_COLUMNS };
    enum Roles { SortRole = Qt::UserRole + 1 };

    explicit OomWhatIfModel(QObject* parent = nullptr);

    void setRows(std::vector<OomWhatIfRow> rows);
    const std::vector<OomWhatIfRow>& rows() const { return rows_; }
    // The config as the table names it: "default" for the defaults, "(the run's)" after its own,
    // a space after each comma.
    static QString configLabel(const OomWhatIfRow& row);

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    int columnCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<OomWhatIfRow> rows_;
};

}  // namespace allocscope::views
