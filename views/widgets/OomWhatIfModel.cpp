#include "views/widgets/OomWhatIfModel.h"

#include <QFont>

#include "views/util/Formatting.h"

namespace allocscope::views {
namespace {
const char* const kWhatIfHeaders[OomWhatIfModel::NUM_COLUMNS] = {"Config", "At the limit", "Over the interval", "Peak", "Headroom"};
const char* const kWhatIfHeaderTips[OomWhatIfModel::NUM_COLUMNS] = {
    "The PYTORCH_CUDA_ALLOC_CONF replayed (the configs allocscope-cli recommend tries)",
    "Whether the program runs out of memory under this config at the inferred limit, and where the first OOM happens",
    "Whether the answer holds at every limit of the inferred interval, or where it changes",
    "Peak reserved: the most memory held from the driver at once (reserved_bytes peak)",
    "How far below the limit the peak stays: the room left for other work"};
}  // namespace

OomWhatIfModel::OomWhatIfModel(QObject* parent) : QAbstractTableModel(parent) {}

void OomWhatIfModel::setRows(std::vector<OomWhatIfRow> rows) {
    beginResetModel();
    rows_ = std::move(rows);
    endResetModel();
}

QString OomWhatIfModel::configLabel(const OomWhatIfRow& row) {
    // A space after each comma lets the column wrap between options (the tooltip keeps the exact text).
    QString config = row.config.isEmpty() ? tr("default") : row.config;
    config.replace(QLatin1Char(','), QStringLiteral(", "));
    return row.recorded ? tr("%1 (the run's)").arg(config) : config;
}

int OomWhatIfModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : static_cast<int>(rows_.size()); }

int OomWhatIfModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : NUM_COLUMNS; }

QVariant OomWhatIfModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= static_cast<int>(rows_.size())) return {};
    const OomWhatIfRow& row = rows_[static_cast<std::size_t>(index.row())];
    const auto bytesOrDash = [](qint64 bytes) { return bytes < 0 ? QStringLiteral("-") : Formatting::bytes(bytes); };
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
            case ConfigColumn: return configLabel(row);
            case OomColumn: return !row.oom ? tr("no OOM") : row.where.isEmpty() ? tr("OOM") : tr("OOM at %1").arg(row.where);
            case PeakReservedColumn: return bytesOrDash(row.peakReserved);
            case HeadroomColumn: return row.oom ? QStringLiteral("-") : bytesOrDash(row.headroom);
            // Only shown when some answer depends on the limit: those say where; the others,
            // short, that theirs does not (the whole sentence is the tooltip).
            case IntervalColumn: return row.holdsOverInterval ? tr("same throughout") : row.overInterval;
            default: return {};
        }
    }
    if (role == SortRole) {
        switch (index.column()) {
            case OomColumn: return row.oom ? 1 : 0;
            case PeakReservedColumn: return row.peakReserved;
            case HeadroomColumn: return row.headroom;
            default: return data(index, Qt::DisplayRole);
        }
    }
    if (role == Qt::FontRole && index.column() <= OomColumn && !row.oom) {
        QFont bold;
        bold.setBold(true);
        return bold;
    }
    if (role == Qt::TextAlignmentRole && (index.column() == PeakReservedColumn || index.column() == HeadroomColumn)) {
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    }
    if (role == Qt::ToolTipRole && index.column() == OomColumn && row.oom) return row.where;
    if (role == Qt::ToolTipRole && index.column() == IntervalColumn) return row.overInterval;
    if (role == Qt::ToolTipRole && index.column() == ConfigColumn) return row.config.isEmpty() ? tr("PyTorch's defaults") : row.config;
    return {};
}

QVariant OomWhatIfModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || section < 0 || section >= NUM_COLUMNS) return QAbstractTableModel::headerData(section, orientation, role);
    if (role == Qt::DisplayRole) return tr(kWhatIfHeaders[section]);
    if (role == Qt::ToolTipRole) return tr(kWhatIfHeaderTips[section]);
    return {};
}

}  // namespace allocscope::views
