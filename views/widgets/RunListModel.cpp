#include "views/widgets/RunListModel.h"

#include <QColor>
#include <QStringList>

#include "views/data/RunVerdictText.h"
#include "views/util/Formatting.h"

namespace allocscope::views {

namespace {
QString csvField(const QString& text) {
    if (!text.contains(QLatin1Char(',')) && !text.contains(QLatin1Char('"')) && !text.contains(QLatin1Char('\n'))) return text;
    QString quoted = text;
    quoted.replace(QLatin1String("\""), QLatin1String("\"\""));
    return QLatin1Char('"') + quoted + QLatin1Char('"');
}
}  // namespace

RunListModel::RunListModel(QObject* parent) : QAbstractTableModel(parent) {}

void RunListModel::setRuns(RunListData runs) {
    beginResetModel();
    runs_ = std::move(runs);
    endResetModel();
}

bool RunListModel::setRunStatus(int number, const QString& status) {
    const int row = rowOfRun(number);
    if (row < 0) return false;
    RunListRow& run = runs_[static_cast<std::size_t>(row)];
    if (run.status == status) return true;
    run.status = status;
    emit dataChanged(index(row, 0), index(row, NUM_COLUMNS - 1));
    return true;
}

int RunListModel::rowOfRun(int number) const {
    for (std::size_t i = 0; i < runs_.size(); ++i) {
        if (runs_[i].number == number) return static_cast<int>(i);
    }
    return -1;
}

int RunListModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : static_cast<int>(runs_.size()); }
int RunListModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : NUM_COLUMNS; }

QVariant RunListModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= static_cast<int>(runs_.size())) return {};
    const RunListRow& run = runs_[static_cast<std::size_t>(index.row())];
    if (role == RunNumberRole) return run.number;
    if (role == Qt::TextAlignmentRole) {
        const bool numeric = index.column() == NumberColumn || index.column() == PeakReservedColumn ||
                             index.column() == OomsColumn || index.column() == EventsColumn;
        return QVariant::fromValue(numeric ? Qt::AlignRight | Qt::AlignVCenter : Qt::AlignLeft | Qt::AlignVCenter);
    }
    if (role == Qt::ToolTipRole && index.column() == VerdictColumn) return RunVerdictText::toolTip(run);
    if (role == Qt::ForegroundRole && index.column() == VerdictColumn && run.verdict == RunVerdictKind::Diverged) {
        return QColor(0xc0, 0x39, 0x2b);  // a diverged replay stands out in the list as well
    }
    // A history that starts mid-run counts its peak and OOMs over the recorded window only.
    const bool window = !run.historyStart.isEmpty() && (index.column() == PeakReservedColumn || index.column() == OomsColumn);
    if (role == Qt::ToolTipRole && window) {
        return QStringLiteral("%1 (window): counted over the trace entries the recording kept (a ring buffer of "
                              "_record_memory_history(max_entries=...)); the whole run's may be higher, so it cannot be "
                              "compared with whole-run figures such as PyTorch's memory_stats()")
            .arg(index.column() == PeakReservedColumn ? QStringLiteral("Peak reserved") : QStringLiteral("OOMs"));
    }
    if (role == Qt::ToolTipRole) {
        QString tip = QStringLiteral("Run %1: %2\nSource: %3\nConfig: %4\nGPU: %5\nStatus: %6")
                          .arg(run.number)
                          .arg(run.name, run.source, run.config.isEmpty() ? QStringLiteral("(defaults)") : run.config, run.gpu, run.status);
        if (!run.historyStart.isEmpty()) tip += QStringLiteral("\nHistory starts mid-run: ") + run.historyStart;
        tip += QStringLiteral("\nVerdict: ") + RunVerdictText::shortText(run);
        return tip;
    }
    if (role != Qt::DisplayRole && role != SortRole) return {};
    const bool sort = role == SortRole;
    switch (index.column()) {
        case NumberColumn: return run.number;
        case NameColumn: {
            QStringList notes;
            if (run.status != QLatin1String("complete")) notes << run.status;
            if (!run.historyStart.isEmpty()) notes << QStringLiteral("history starts mid-run");
            return notes.isEmpty() || sort ? run.name : run.name + QStringLiteral(" (") + notes.join(QStringLiteral("; ")) + QLatin1Char(')');
        }
        case VerdictColumn: return RunVerdictText::shortText(run);
        case ConfigColumn: return run.config.isEmpty() && !sort ? QStringLiteral("(defaults)") : run.config;
        case PeakReservedColumn:
            if (sort) return run.peakReserved;
            if (run.peakReserved < 0) return QStringLiteral("—");
            return Formatting::bytes(run.peakReserved) + (window ? QStringLiteral(" (window)") : QString());
        case OomsColumn:
            if (sort) return run.ooms;
            if (run.ooms < 0) return QStringLiteral("—");
            return Formatting::count(run.ooms) + (window ? QStringLiteral(" (window)") : QString());
        case EventsColumn: return sort ? QVariant(run.eventCount) : QVariant(Formatting::count(run.eventCount));
        case SourceColumn: return run.source;
        case GpuColumn: return run.gpu;
        default: return {};
    }
}

QVariant RunListModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal) return {};
    static const char* const kTitles[NUM_COLUMNS] = {"#", "Name", "Verdict", "Config", "Peak reserved", "OOMs", "Events", "Source", "GPU"};
    static const char* const kTips[NUM_COLUMNS] = {
        "Run number in the session", "Workload or imported file",
        "Was the run compared with a recording? exact / diverged (a replay under the recording's own settings), "
        "what-if (another config: not compared), simulated (a workload), unknown (no verdict stored)",
        "PYTORCH_CUDA_ALLOC_CONF of the run",
        "Highest reserved (cudaMalloc'ed) memory during the run", "Out-of-memory errors the program saw",
        "Allocator events recorded", "Where the run came from", "Simulated GPU"};
    if (section < 0 || section >= NUM_COLUMNS) return {};
    if (role == Qt::DisplayRole) return QString::fromLatin1(kTitles[section]);
    if (role == Qt::ToolTipRole) return QString::fromLatin1(kTips[section]);
    return {};
}

QString RunListModel::toCsv() const {
    QString out = QStringLiteral("run,name,config,peak_reserved_bytes,ooms,events,source,gpu,status,verdict\n");
    for (const RunListRow& run : runs_) {
        QStringList fields{QString::number(run.number), csvField(run.name), csvField(run.config),
                           run.peakReserved < 0 ? QString() : QString::number(run.peakReserved),
                           run.ooms < 0 ? QString() : QString::number(run.ooms), QString::number(run.eventCount),
                           csvField(run.source), csvField(run.gpu), run.status,
                           csvField(run.verdict == RunVerdictKind::Unknown ? RunVerdictText::shortText(run) : run.verdictText)};
        out += fields.join(QLatin1Char(',')) + QLatin1Char('\n');
    }
    return out;
}

}  // namespace allocscope::views
