#pragma once
// The session's runs as a table: number, name, verdict (compared with a recording?), config, peak
// reserved, OOMs, events, source, GPU.
// SortRole gives raw numbers so the proxy sorts 2 GiB above 900 MiB.
#include <QAbstractTableModel>

#include "views/data/RunListData.h"

namespace allocscope::views {

class RunListModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { NumberColumn = 0, NameColumn, VerdictColumn, ConfigColumn, PeakReservedColumn, OomsColumn, EventsColumn, SourceColumn, GpuColumn, NUM_COLUMNS };
    enum Roles { SortRole = Qt::UserRole + 1, RunNumberRole };

    explicit RunListModel(QObject* parent = nullptr);

    void setRuns(RunListData runs);
    const RunListData& runs() const { return runs_; }
    int rowOfRun(int number) const;  // -1 when absent
    // One row's status as the window knows it beyond the file (a run another process records
    // right now, which the file cannot tell from one whose recorder died); the next setRuns()
    // replaces it. false when the run is not listed.
    bool setRunStatus(int number, const QString& status);

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    int columnCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // The table as CSV (header + one line per run, raw numbers), for File ▸ Export.
    QString toCsv() const;

private:
    RunListData runs_;
};

}  // namespace allocscope::views
