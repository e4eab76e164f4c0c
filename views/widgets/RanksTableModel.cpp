#include "views/widgets/RanksTableModel.h"

#include <QColor>
#include <QFont>
#include <QStringList>

#include <limits>

#include "views/data/RunVerdictText.h"
#include "views/util/Formatting.h"

namespace allocscope::views {

namespace {
const char* const kHeaders[RanksTableModel::NUM_COLUMNS] = {
    "Rank", "Run", "Peak reserved", "vs median", "OOMs", "Retries", "Peak allocated", "Frag. at peak", "Verdict", "Name"};
const char* const kHeaderTips[RanksTableModel::NUM_COLUMNS] = {
    "The rank of the distributed job: from the snapshot's user_metadata (\"rank=3\"), else its file name (rank3, "
    "rank_3, rank-03, _r3_); - = none found",
    "The run's number in the session",
    "The most memory held from the driver at once (reserved_bytes peak)",
    "Peak reserved against the median rank's (the run with the median peak reserved)",
    "Requests that failed with out of memory",
    "num_alloc_retries: failed cudaMallocs retried after releasing cached blocks",
    "The most memory handed to tensors at once (allocated_bytes peak)",
    "Fragmentation at the peak: 1 - allocated / reserved while reserved memory was at its peak, at the moment of "
    "that peak with the most allocated (the share of reserved bytes that held no tensor even then: cached free "
    "blocks, rounding, split remainders)",
    "Whether the replay reproduced the recording (exact / diverged / what-if / simulated / unknown)",
    "The run's name (the file it was imported from)"};
}  // namespace

RanksTableModel::RanksTableModel(QObject* parent) : QAbstractTableModel(parent) {}

int RanksTableModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : static_cast<int>(data_.rows.size()); }

int RanksTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : NUM_COLUMNS; }

void RanksTableModel::setRanks(RanksData data) {
    beginResetModel();
    data_ = std::move(data);
    endResetModel();
}

QString RanksTableModel::outlierReason(const RankRowData& row) const {
    QStringList why;
    if (row.oomOutlier) why << (row.ooms == 1 ? tr("it ran out of memory (1 OOM)") : tr("it ran out of memory (%1 OOMs)").arg(row.ooms));
    if (row.reservedOutlier) {
        why << tr("its peak reserved is %1 above the median rank's (more than %2)")
                   .arg(Formatting::percent(row.aboveMedian), Formatting::percent(data_.threshold));
    }
    return why.isEmpty() ? QString() : tr("Outlier: %1.").arg(why.join(tr("; ")));
}

QVariant RanksTableModel::raw(const RankRowData& row, int column) const {
    switch (column) {
        case RankColumn: return row.rank < 0 ? QVariant(std::numeric_limits<int>::max()) : QVariant(row.rank);
        case RunColumn: return row.run.number;
        case PeakReservedColumn: return row.peakReserved;
        case AboveMedianColumn: return row.aboveMedian;
        case PeakAllocatedColumn: return row.peakAllocated;
        case FragmentationColumn: return row.fragmentationAtPeak;
        case RetriesColumn: return row.retries;
        case OomsColumn: return row.ooms;
        case VerdictColumn: return RunVerdictText::shortText(row.run);
        case NameColumn: return row.run.name;
        default: return {};
    }
}

QVariant RanksTableModel::display(const RankRowData& row, int column) const {
    const bool numbers = row.complete;
    switch (column) {
        case RankColumn: return row.rank < 0 ? QStringLiteral("-") : QString::number(row.rank);
        case RunColumn: return row.run.number;
        case PeakReservedColumn: return numbers ? Formatting::bytes(row.peakReserved) : QStringLiteral("-");
        case AboveMedianColumn:
            if (!numbers || data_.medianRun == 0) return QStringLiteral("-");
            if (row.run.number == data_.medianRun) return tr("median");
            return (row.aboveMedian >= 0 ? QStringLiteral("+") : QString()) + Formatting::percent(row.aboveMedian);
        case PeakAllocatedColumn: return numbers ? Formatting::bytes(row.peakAllocated) : QStringLiteral("-");
        case FragmentationColumn: return numbers ? Formatting::percent(row.fragmentationAtPeak) : QStringLiteral("-");
        case RetriesColumn: return numbers ? Formatting::count(row.retries) : QStringLiteral("-");
        case OomsColumn: return numbers ? Formatting::count(row.ooms) : QStringLiteral("-");
        case VerdictColumn: return RunVerdictText::shortText(row.run);
        case NameColumn: return row.run.name;
        default: return {};
    }
}

QVariant RanksTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const RankRowData& row = data_.rows[static_cast<std::size_t>(index.row())];
    switch (role) {
        case Qt::DisplayRole: return display(row, index.column());
        case SortRole: return raw(row, index.column());
        case RunNumberRole: return row.run.number;
        case OutlierRole: return row.outlier();
        case Qt::TextAlignmentRole:
            return index.column() == NameColumn || index.column() == VerdictColumn
                       ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                       : QVariant(Qt::AlignRight | Qt::AlignVCenter);
        case Qt::BackgroundRole:
            // Amber for a peak far above the median, red for an OOM: readable on light and dark.
            if (row.oomOutlier) return QColor(220, 60, 60, 90);
            if (row.reservedOutlier) return QColor(235, 165, 30, 90);
            return {};
        case Qt::FontRole:
            if (row.run.number == data_.medianRun && index.column() == AboveMedianColumn) {
                QFont font;
                font.setItalic(true);
                return font;
            }
            return {};
        case Qt::ToolTipRole: {
            QString tip = tr("Run %1: %2").arg(row.run.number).arg(row.run.name);
            if (row.rank >= 0) tip += tr("\nRank %1 (from its %2)").arg(row.rank).arg(row.rankSource);
            if (!row.complete) tip += tr("\nThe run is not complete (interrupted): no numbers.");
            const QString reason = outlierReason(row);
            if (!reason.isEmpty()) tip += QLatin1Char('\n') + reason;
            if (index.column() == FragmentationColumn) tip += QLatin1Char('\n') + tr(kHeaderTips[FragmentationColumn]);
            if (index.column() == VerdictColumn) tip += QLatin1Char('\n') + RunVerdictText::toolTip(row.run);
            tip += tr("\nClick: open this run beside the median rank in Compare.");
            return tip;
        }
        default: return {};
    }
}

QVariant RanksTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || section < 0 || section >= NUM_COLUMNS) return {};
    if (role == Qt::DisplayRole) return tr(kHeaders[section]);
    if (role == Qt::ToolTipRole) return tr(kHeaderTips[section]);
    return {};
}

}  // namespace allocscope::views
