#pragma once
// The OOM tab's what-if table: one row per config `recommend` tries, replayed at the inferred
// limit: OOM or not, where it fails, peak reserved, headroom under the limit, and -- when the
// limit is an interval -- whether the answer holds over all of it. The run's own config is
// marked; rows that avoid the OOM say so in bold.
#include <QAbstractTableModel>

#include <vector>

#include "views/data/OomAnswerData.h"

namespace allocscope::views {

class OomWhatIfModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { ConfigColumn = 0, OomColumn, WhereColumn, PeakReservedColumn, HeadroomColumn, IntervalColumn, NUM_COLUMNS };
    enum Roles { SortRole = Qt::UserRole + 1 };

    explicit OomWhatIfModel(QObject* parent = nullptr);

    void setRows(std::vector<OomWhatIfRow> rows);
    const std::vector<OomWhatIfRow>& rows() const { return rows_; }
    // The config as the table names it: "default" for the defaults, "(the run's)" after its own.
    static QString configLabel(const OomWhatIfRow& row);

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    int columnCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<OomWhatIfRow> rows_;
};

}  // namespace allocscope::views
