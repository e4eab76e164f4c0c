#pragma once
// The Live tensors table over LiveTensorsData: one row per live block at the event. Display text
// is formatted (binary units, hex addresses); SortRole gives the raw value so a sort proxy orders
// bytes as numbers. toCsv() writes raw values, in the model's order.
#include <QAbstractTableModel>

#include "views/data/LiveTensorsData.h"

namespace allocscope::views {

class LiveTensorsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        SizeColumn = 0,
        RequestedColumn,
        FrameColumn,
        AgeColumn,
        StreamColumn,
        PoolColumn,
        SegmentColumn,
        AddressColumn,
        NUM_COLUMNS
    };
    enum Roles { SortRole = Qt::UserRole + 1, AddressRole };

    explicit LiveTensorsModel(QObject* parent = nullptr);

    void setTensors(LiveTensorsData data);
    const LiveTensorsData& tensors() const { return data_; }
    qint64 totalBytes() const;
    // Header line, then one line per row: size,requested_size,top_user_frame,age_events,
    // alloc_event,stream,pool,segment,address,state. Frames are quoted as CSV wants.
    QString toCsv() const;

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    int columnCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    LiveTensorsData data_;
};

}  // namespace allocscope::views
