#include "views/widgets/SummaryTableModel.h"

#include "views/util/Formatting.h"

namespace allocscope::views {

SummaryTableModel::SummaryTableModel(QObject* parent) : QAbstractTableModel(parent) {}

int SummaryTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int SummaryTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : NUM_COLUMNS; }

QVariant SummaryTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= static_cast<int>(rows_.size()) || index.column() >= NUM_COLUMNS)
        return QVariant();
    const SummaryRow& row = rows_[static_cast<std::size_t>(index.row())];
    qint64 value = 0;
    switch (index.column()) {
        case CurrentColumn: value = row.current; break;
        case PeakColumn: value = row.peak; break;
        case AllocatedColumn: value = row.allocated; break;
        case FreedColumn: value = row.freed; break;
        default: break;
    }
    switch (role) {
        case Qt::DisplayRole:
            if (index.column() == MetricColumn) return row.metric;
            return row.isBytes ? Formatting::bytes(value) : Formatting::count(value);
        case SortRole:
            if (index.column() == MetricColumn) return row.metric;
            return value;
        case Qt::ToolTipRole: {
            if (index.column() == MetricColumn) return row.metric;
            const QString tip = row.isBytes ? tr("%1 bytes").arg(Formatting::count(value)) : Formatting::count(value);
            if (!windowNote_.isEmpty() && windowOnly(row, index.column())) return tip + tr(" (window)\n\n") + windowNote_;
            return tip;
        }
        case Qt::TextAlignmentRole:
            return index.column() == MetricColumn ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                                                  : QVariant(Qt::AlignRight | Qt::AlignVCenter);
        default: return QVariant();
    }
}

bool SummaryTableModel::windowOnly(const SummaryRow& row, int column) {
    return column == PeakColumn || column == AllocatedColumn || column == FreedColumn || (column == CurrentColumn && row.counter);
}

QVariant SummaryTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    // Current stays unmarked: only the counters' current values are a window's (their cells say so).
    const bool marked = !windowNote_.isEmpty() && (section == PeakColumn || section == AllocatedColumn || section == FreedColumn);
    if (orientation == Qt::Horizontal && role == Qt::ToolTipRole && marked) return windowNote_;
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return QAbstractTableModel::headerData(section, orientation, role);
    const QString w = marked ? tr(" (window)") : QString();
    switch (section) {
        case MetricColumn: return tr("Metric");
        case CurrentColumn: return tr("Current");
        case PeakColumn: return tr("Peak") + w;
        case AllocatedColumn: return tr("Tot. alloc") + w;
        case FreedColumn: return tr("Tot. freed") + w;
        default: return QVariant();
    }
}

void SummaryTableModel::resetData(const std::vector<SummaryRow>& rows, const QString& windowNote) {
    beginResetModel();
    rows_ = rows;
    windowNote_ = windowNote;
    endResetModel();
    emit headerDataChanged(Qt::Horizontal, 0, NUM_COLUMNS - 1);
}

}  // namespace allocscope::views
