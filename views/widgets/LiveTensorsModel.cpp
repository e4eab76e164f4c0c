#include "views/widgets/LiveTensorsModel.h"

#include <QBrush>
#include <QColor>
#include <QStringList>

#include <limits>

#include "views/util/Formatting.h"

namespace allocscope::views {
namespace {

QString csvField(const QString& text) {
    if (!text.contains(QLatin1Char(',')) && !text.contains(QLatin1Char('"')) && !text.contains(QLatin1Char('\n'))) return text;
    QString quoted = text;
    quoted.replace(QLatin1Char('"'), QStringLiteral("\"\""));
    return QLatin1Char('"') + quoted + QLatin1Char('"');
}

}  // namespace

LiveTensorsModel::LiveTensorsModel(QObject* parent) : QAbstractTableModel(parent) {}

void LiveTensorsModel::setTensors(LiveTensorsData data) {
    beginResetModel();
    data_ = std::move(data);
    endResetModel();
}

qint64 LiveTensorsModel::totalBytes() const {
    qint64 total = 0;
    for (const LiveTensorRow& r : data_.rows) total += static_cast<qint64>(r.size);
    return total;
}

int LiveTensorsModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : static_cast<int>(data_.rows.size()); }
int LiveTensorsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : NUM_COLUMNS; }

QVariant LiveTensorsModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const LiveTensorRow& r = data_.rows[static_cast<std::size_t>(index.row())];
    const int c = index.column();
    if (role == AddressRole) return r.address;
    if (role == SortRole) {
        switch (c) {
            case SizeColumn: return r.size;
            case RequestedColumn: return r.requested;
            case FrameColumn: return r.topFrame;
            case AgeColumn: return r.age < 0 ? std::numeric_limits<qint64>::max() : r.age;  // older than the history: oldest
            case StreamColumn: return r.stream;
            case PoolColumn: return r.pool;
            case SegmentColumn: return r.segment;
            case AddressColumn: return r.address;
            default: return {};
        }
    }
    if (role == Qt::TextAlignmentRole) {
        if (c == FrameColumn || c == PoolColumn) return QVariant(Qt::AlignLeft | Qt::AlignVCenter);
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    }
    if (role == Qt::ForegroundRole && c == FrameColumn && !r.hasStack) return QBrush(QColor(128, 128, 128));
    if (role == Qt::ToolTipRole) {
        switch (c) {
            case FrameColumn:
                return r.hasStack ? tr("Allocated from (innermost first):\n%1").arg(r.stackText)
                                  : (data_.noStackWhy.isEmpty() ? tr("This block was recorded without frames.") : data_.noStackWhy);
            case AgeColumn:
                return r.age < 0 ? tr("Allocated before the recorded history starts")
                                 : tr("Allocated at event %1, %2 events ago").arg(Formatting::count(r.allocEvent), Formatting::count(r.age));
            case SizeColumn:
                return r.pendingFree ? tr("%1 B — freed by the program, waiting for work on another stream").arg(r.size)
                                     : tr("%1 B").arg(r.size);
            default: return {};
        }
    }
    if (role != Qt::DisplayRole) return {};
    switch (c) {
        case SizeColumn: return Formatting::bytes(r.size) + (r.pendingFree ? tr(" (pending free)") : QString());
        case RequestedColumn: return Formatting::bytes(r.requested);
        case FrameColumn: return r.topFrame;
        case AgeColumn: return r.age < 0 ? tr("before history") : Formatting::count(r.age);
        case StreamColumn: return QString::number(r.stream);
        case PoolColumn: return r.pool;
        case SegmentColumn: return Formatting::address(r.segment);
        case AddressColumn: return Formatting::address(r.address);
        default: return {};
    }
}

QVariant LiveTensorsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal) return {};
    if (role == Qt::ToolTipRole) {
        switch (section) {
            case SizeColumn: return tr("Block bytes (what allocated_bytes counts)");
            case RequestedColumn: return tr("What the program asked for; the rest of the block is rounding");
            case FrameColumn: return tr("The innermost frame of the user's code (outside torch/, site-packages and Python's own modules)");
            case AgeColumn: return tr("Events since the block was allocated");
            case StreamColumn: return tr("The CUDA stream the block was allocated on");
            case PoolColumn: return tr("The memory pool of the block's segment");
            case SegmentColumn: return tr("The address of the segment holding the block");
            case AddressColumn: return tr("The block's address");
            default: return {};
        }
    }
    if (role != Qt::DisplayRole) return {};
    switch (section) {
        case SizeColumn: return tr("Size");
        case RequestedColumn: return tr("Requested");
        case FrameColumn: return tr("Top user frame");
        case AgeColumn: return tr("Age (events)");
        case StreamColumn: return tr("Stream");
        case PoolColumn: return tr("Pool");
        case SegmentColumn: return tr("Segment");
        case AddressColumn: return tr("Address");
        default: return {};
    }
}

QString LiveTensorsModel::toCsv() const {
    QString out = QStringLiteral("size,requested_size,top_user_frame,age_events,alloc_event,stream,pool,segment,address,state\n");
    for (const LiveTensorRow& r : data_.rows) {
        const QStringList fields{QString::number(r.size),
                                 QString::number(r.requested),
                                 csvField(r.topFrame),
                                 r.age < 0 ? QString() : QString::number(r.age),
                                 r.allocEvent < 0 ? QString() : QString::number(r.allocEvent),
                                 QString::number(r.stream),
                                 csvField(r.pool),
                                 Formatting::address(r.segment),
                                 Formatting::address(r.address),
                                 r.pendingFree ? QStringLiteral("active_pending_free") : QStringLiteral("active_allocated")};
        out += fields.join(QLatin1Char(',')) + QLatin1Char('\n');
    }
    return out;
}

}  // namespace allocscope::views
