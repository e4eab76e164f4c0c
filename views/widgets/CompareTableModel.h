#pragma once
// The Compare tab's table: one row per config, the numbers of the bar charts (plus peak
// allocated and cudaFree calls) formatted for reading; SortRole holds the raw number (bytes,
// count, microseconds) and toCsv() writes the raw numbers for File ▸ Export.
#include <QAbstractTableModel>
#include <QColor>

#include <vector>

#include "views/data/CompareData.h"
#include "views/theme/ThemePalette.h"

namespace allocscope::views {

class CompareTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        ConfigColumn = 0,
        PeakReservedColumn,
        PeakAllocatedColumn,
        WasteColumn,
        CudaMallocColumn,
        CudaFreeColumn,
        RetriesColumn,
        OomsColumn,
        AllocatorTimeColumn,
        RunColumn,
        NUM_COLUMNS
    };
    enum Roles { SortRole = Qt::UserRole + 1 };

    explicit CompareTableModel(QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    int columnCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // `windowNote` (CompareData::windowNote): when a run is windowOnly, the headers of the columns
    // whose figures cover only its window read "… (window)" and their tooltips, and the
    // tooltips of that run's cells, carry the note.
    void setRuns(const std::vector<CompareRun>& runs, const QString& windowNote = {});
    // Every column but the config and the run number: peaks, waste at the peak, counts, time.
    static bool windowOnlyColumn(int column) { return column != ConfigColumn && column != RunColumn; }
    void setTheme(Theme theme);
    // Header line plus one line per config; numbers raw (bytes, counts, microseconds).
    QString toCsv() const;

private:
    QVariant raw(const CompareRun& run, int column) const;
    QString toolTip(const CompareRun& run, int column) const;
    bool anyWindowOnly() const;
    std::vector<CompareRun> runs_;
    QString windowNote_;
    Theme theme_ = Theme::Light;
};

}  // namespace allocscope::views
