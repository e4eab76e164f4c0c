#pragma once
// The compact current / peak / total table of memory_summary() numbers. Values are formatted for
// display (bytes in binary units); SortRole gives the raw number.
#include <QAbstractTableModel>

#include "views/data/SummaryTableData.h"

namespace allocscope::views {

class SummaryTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { MetricColumn = 0, CurrentColumn, PeakColumn, AllocatedColumn, FreedColumn, NUM_COLUMNS };
    enum Roles { SortRole = Qt::UserRole + 1 };

    explicit SummaryTableModel(QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    int columnCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // Whether a cell shows a figure that, after a truncated history, covers only the window:
    // peaks, the cumulative totals, a counter's value.
    static bool windowOnly(const SummaryRow& row, int column);

public slots:
    // `windowNote` (SummaryTableData::windowNote): when set, the window-only headers read
    // "… (window)" and their cells' tooltips carry the note.
    void resetData(const std::vector<SummaryRow>& rows, const QString& windowNote = {});

private:
    std::vector<SummaryRow> rows_;
    QString windowNote_;
};

}  // namespace allocscope::views
