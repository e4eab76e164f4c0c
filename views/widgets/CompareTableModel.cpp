#include "views/widgets/CompareTableModel.h"

#include <QStringList>

#include <algorithm>

#include "views/charts/CompareBarChart.h"
#include "views/charts/CompareColors.h"
#include "views/util/Formatting.h"

namespace allocscope::views {

namespace {
const char* const kHeaders[CompareTableModel::NUM_COLUMNS] = {
    "Config", "Peak reserved", "Peak allocated", "Waste at peak", "cudaMalloc", "cudaFree", "Retries", "OOMs",
    "Est. allocator time", "Run"};
const char* const kCsvHeaders[CompareTableModel::NUM_COLUMNS] = {
    "config", "peak_reserved_bytes", "peak_allocated_bytes", "waste_at_peak_bytes", "cuda_malloc_calls",
    "cuda_free_calls", "retries", "ooms", "est_allocator_time_us", "run"};
const char* const kHeaderTips[CompareTableModel::NUM_COLUMNS] = {
    "The PYTORCH_CUDA_ALLOC_CONF string of the run",
    "The most memory held from the driver at once (reserved_bytes peak)",
    "The most memory handed to the program at once (allocated_bytes peak)",
    "At the peak-reserved point: rounding beyond the requests + free bytes stranded in segments that still hold a "
    "tensor",
    "segment_alloc events (one cudaMalloc each)",
    "segment_free events (one cudaFree each)",
    "num_alloc_retries: failed cudaMallocs retried after releasing cached blocks",
    "Requests that failed with out of memory (first op in brackets)",
    "Per-op cost measured on an H100 plus 38.8 µs per driver call (maps/unmaps charged the same)",
    "The run's number in the session (— = not recorded: cudaMallocAsync has no segments to record)"};

// One unit per byte column (the largest value's), so the rows compare digit for digit:
// "1,194.0 MiB" above "1,162.0 MiB" rather than "1.17 GiB" above "1.13 GiB".
QString bytesIn(quint64 bytes, quint64 columnMax) {
    static const char* const names[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int unit = 0;
    double scale = 1.0;
    while (unit < 4 && static_cast<double>(columnMax) / scale >= 1024.0 * 10.0) {
        scale *= 1024.0;
        ++unit;
    }
    const double value = static_cast<double>(bytes) / scale;
    const QString number = unit == 0 ? Formatting::count(static_cast<qint64>(bytes))
                                     : QStringLiteral("%1.%2")
                                           .arg(Formatting::count(static_cast<qint64>(value * 10.0 + 0.5) / 10))
                                           .arg(static_cast<qint64>(value * 10.0 + 0.5) % 10);
    return number + QLatin1Char(' ') + QString::fromLatin1(names[unit]);
}

QString csvField(const QString& text) {
    if (!text.contains(QLatin1Char(',')) && !text.contains(QLatin1Char('"')) && !text.contains(QLatin1Char('\n')))
        return text;
    QString quoted = text;
    quoted.replace(QStringLiteral("\""), QStringLiteral("\"\""));
    return QStringLiteral("\"%1\"").arg(quoted);
}
}  // namespace

CompareTableModel::CompareTableModel(QObject* parent) : QAbstractTableModel(parent) {}

int CompareTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(runs_.size());
}

int CompareTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : NUM_COLUMNS; }

void CompareTableModel::setRuns(const std::vector<CompareRun>& runs, const QString& windowNote) {
    beginResetModel();
    runs_ = runs;
    windowNote_ = windowNote;
    endResetModel();
    emit headerDataChanged(Qt::Horizontal, 0, NUM_COLUMNS - 1);
}

bool CompareTableModel::anyWindowOnly() const {
    return std::any_of(runs_.begin(), runs_.end(), [](const CompareRun& r) { return r.windowOnly; });
}

void CompareTableModel::setTheme(Theme theme) {
    if (theme == theme_) return;
    theme_ = theme;
    if (!runs_.empty()) emit dataChanged(index(0, ConfigColumn), index(rowCount() - 1, ConfigColumn), {Qt::DecorationRole});
}

QVariant CompareTableModel::raw(const CompareRun& r, int column) const {
    switch (column) {
        case ConfigColumn: return r.label;
        case PeakReservedColumn: return r.peakReserved;
        case PeakAllocatedColumn: return r.peakAllocated;
        case WasteColumn: return r.waste();
        case CudaMallocColumn: return r.cudaMallocs;
        case CudaFreeColumn: return r.cudaFrees;
        case RetriesColumn: return r.retries;
        case OomsColumn: return r.ooms;
        case AllocatorTimeColumn: return r.allocatorUs;
        case RunColumn: return r.run;
        default: return {};
    }
}

QString CompareTableModel::toolTip(const CompareRun& r, int column) const {
    const bool noSegments = r.asyncBackend && (column == WasteColumn || column == CudaMallocColumn ||
                                               column == CudaFreeColumn || column == RetriesColumn);
    if (column == ConfigColumn)
        return r.configText.isEmpty() ? tr("PyTorch's defaults (empty PYTORCH_CUDA_ALLOC_CONF)") : r.configText;
    if (noSegments) return tr("backend:cudaMallocAsync has no segments: the driver's pool does not report this");
    if (column == WasteColumn && !r.asyncBackend)
        return tr("rounding %1 + stranded free %2").arg(Formatting::bytes(r.roundingWaste), Formatting::bytes(r.strandedFree));
    if (column == PeakReservedColumn || column == PeakAllocatedColumn)
        return tr("%1 bytes").arg(Formatting::count(raw(r, column).toLongLong()));
    return QString::fromUtf8(kHeaderTips[column]);
}

QVariant CompareTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= NUM_COLUMNS) return {};
    const CompareRun& r = runs_[static_cast<std::size_t>(index.row())];
    const int column = index.column();
    if (role == SortRole) return raw(r, column);
    if (role == Qt::DecorationRole && column == ConfigColumn) return CompareColors::forRun(index.row(), theme_);
    if (role == Qt::TextAlignmentRole)
        return column == ConfigColumn ? QVariant(Qt::AlignLeft | Qt::AlignVCenter) : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    const bool noSegments = r.asyncBackend && (column == WasteColumn || column == CudaMallocColumn ||
                                               column == CudaFreeColumn || column == RetriesColumn);
    if (role == Qt::ToolTipRole) {
        // A window's figure: its own tip, then why it cannot be read against a whole run's.
        if (r.windowOnly && windowOnlyColumn(column))
            return toolTip(r, column) + QStringLiteral("\n\n") + tr("%1 (window): %2").arg(tr(kHeaders[column]), windowNote_);
        return toolTip(r, column);
    }
    if (role != Qt::DisplayRole) return {};
    if (noSegments) return QStringLiteral("—");
    switch (column) {
        case ConfigColumn: return r.label;
        case PeakReservedColumn:
        case PeakAllocatedColumn:
        case WasteColumn: {
            quint64 columnMax = 0;
            for (const CompareRun& other : runs_) columnMax = std::max(columnMax, raw(other, column).toULongLong());
            return bytesIn(raw(r, column).toULongLong(), columnMax);
        }
        case CudaMallocColumn: return Formatting::count(static_cast<qint64>(r.cudaMallocs));
        case CudaFreeColumn: return Formatting::count(static_cast<qint64>(r.cudaFrees));
        case RetriesColumn: return Formatting::count(static_cast<qint64>(r.retries));
        case OomsColumn:
            return r.firstOomOp >= 0 ? tr("%1 (op %2)").arg(Formatting::count(static_cast<qint64>(r.ooms)), Formatting::count(r.firstOomOp))
                                     : Formatting::count(static_cast<qint64>(r.ooms));
        case AllocatorTimeColumn: return CompareBarChart::formatValue(CompareMetric::AllocatorTime, r.allocatorUs);
        case RunColumn: return r.run > 0 ? QString::number(r.run) : QStringLiteral("—");
        default: return {};
    }
}

QVariant CompareTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || section < 0 || section >= NUM_COLUMNS) return {};
    const bool marked = windowOnlyColumn(section) && anyWindowOnly();
    if (role == Qt::DisplayRole) return marked ? tr("%1 (window)").arg(tr(kHeaders[section])) : tr(kHeaders[section]);
    if (role == Qt::ToolTipRole)
        return marked ? tr(kHeaderTips[section]) + QStringLiteral("\n\n") + windowNote_ : tr(kHeaderTips[section]);
    return {};
}

QString CompareTableModel::toCsv() const {
    QStringList lines;
    QStringList header;
    for (const char* h : kCsvHeaders) header << QString::fromLatin1(h);
    header.insert(1, QStringLiteral("config_string"));
    // window_only 1: the run replays a window of its recording, its peaks and counts cover only that.
    header << QStringLiteral("first_oom_op") << QStringLiteral("rounding_bytes") << QStringLiteral("stranded_free_bytes")
           << QStringLiteral("window_only");
    lines << header.join(QLatin1Char(','));
    for (const CompareRun& r : runs_) {
        QStringList f;
        f << csvField(r.label) << csvField(r.configText) << QString::number(r.peakReserved)
          << QString::number(r.peakAllocated);
        // Numbers the async backend cannot have are left empty rather than written as 0.
        if (r.asyncBackend) {
            f << QString() << QString() << QString() << QString();
        } else {
            f << QString::number(r.waste()) << QString::number(r.cudaMallocs) << QString::number(r.cudaFrees)
              << QString::number(r.retries);
        }
        f << QString::number(r.ooms) << QString::number(r.allocatorUs, 'f', 3)
          << (r.run > 0 ? QString::number(r.run) : QString())
          << (r.firstOomOp >= 0 ? QString::number(r.firstOomOp) : QString());
        if (r.asyncBackend) {
            f << QString() << QString();
        } else {
            f << QString::number(r.roundingWaste) << QString::number(r.strandedFree);
        }
        f << (r.windowOnly ? QStringLiteral("1") : QStringLiteral("0"));
        lines << f.join(QLatin1Char(','));
    }
    return lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

}  // namespace allocscope::views
