#pragma once
// The Stacks tab: who holds the memory at one event. A toolbar row (At: the scrubber's event or
// the run's peak; Diff: off, another event, or another run at the same program op; Hide PyTorch
// internals), then two sub-tabs: "Call stacks" (the tree and, beside it, an icicle chart of the
// same nodes, kept in step) and "Live tensors" (a sortable table of the live blocks, with Export
// CSV). Plain data in, the user's choice and block clicks out; app/ computes.
#include <QList>
#include <QPair>
#include <QWidget>

#include "views/data/LiveTensorsData.h"
#include "views/data/StackTreeData.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;
class QSortFilterProxyModel;
class QSpinBox;
class QTabWidget;
class QTableView;
class QTreeView;

namespace allocscope::views {

class IcicleWidget;
class LiveTensorsModel;
class StackTreeModel;

class StacksWidget : public QWidget {
    Q_OBJECT
public:
    explicit StacksWidget(QWidget* parent = nullptr);

    StacksChoice choice() const;
    void setChoice(const StacksChoice& choice);  // emits choiceChanged once
    // The other runs the diff may compare with: (number, label).
    void setRuns(const QList<QPair<int, QString>>& runs);
    void setEventCount(qint64 count);
    void setTree(StackTreeData value);
    void setTensors(LiveTensorsData value);
    // "Computing…", an error, or "" (the description of what is shown).
    void setStatus(const QString& text, bool error = false);
    QString statusText() const;
    bool exportCsv(const QString& path, QString* error) const;

    QTreeView* tree() const { return tree_; }
    StackTreeModel* treeModel() const { return treeModel_; }
    IcicleWidget* icicle() const { return icicle_; }
    QTableView* table() const { return table_; }
    LiveTensorsModel* tensorModel() const { return tensorModel_; }
    QSortFilterProxyModel* tensorProxy() const { return proxy_; }
    QTabWidget* subTabs() const { return subTabs_; }
    QCheckBox* hideInternals() const { return hide_; }
    QLabel* tensorSummary() const { return tensorSummary_; }

signals:
    void choiceChanged();
    void blockActivated(quint64 address);

private:
    void updateDiffControls();
    void syncIcicleFromTree();
    void selectTreePath(const QList<int>& path);
    void showExportDialog();

    QComboBox* at_ = nullptr;
    QComboBox* diff_ = nullptr;
    QSpinBox* otherEvent_ = nullptr;
    QComboBox* otherRun_ = nullptr;
    QCheckBox* hide_ = nullptr;
    QLabel* status_ = nullptr;
    QTabWidget* subTabs_ = nullptr;
    QTreeView* tree_ = nullptr;
    StackTreeModel* treeModel_ = nullptr;
    IcicleWidget* icicle_ = nullptr;
    QTableView* table_ = nullptr;
    LiveTensorsModel* tensorModel_ = nullptr;
    QSortFilterProxyModel* proxy_ = nullptr;
    QLabel* tensorSummary_ = nullptr;
    QPushButton* export_ = nullptr;
    bool quiet_ = false;  // setChoice in progress: one choiceChanged at the end
};

}  // namespace allocscope::views
