#pragma once
// The Stacks tab's tree: bytes and blocks by call stack, caller to callee, over StackTreeData.
// One top-level row, the root ("all live blocks"), so the total is always in view. One side:
// Frame, Bytes, Blocks, Share (of the root); a diff: Frame, Change, Before, After, Blocks change.
// SortRole gives raw numbers; the data is read-only.
#include <QAbstractItemModel>

#include <unordered_map>

#include "views/data/StackTreeData.h"

namespace allocscope::views {

class StackTreeModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column { FrameColumn = 0, BytesColumn, BlocksColumn, ShareColumn, NUM_SINGLE_COLUMNS };
    enum DiffColumn { DiffFrameColumn = 0, ChangeColumn, BeforeColumn, AfterColumn, BlocksChangeColumn, NUM_DIFF_COLUMNS };
    enum Roles { SortRole = Qt::UserRole + 1 };

    explicit StackTreeModel(QObject* parent = nullptr);

    void setTree(StackTreeData data);
    const StackTreeData& treeData() const { return data_; }
    // The node an index stands for (nullptr for an invalid index), and back.
    const StackTreeNode* node(const QModelIndex& index) const;
    QModelIndex indexOf(const StackTreeNode* node, int column = 0) const;

    QModelIndex index(int row, int column, const QModelIndex& parent = QModelIndex()) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = QModelIndex()) const override;
    int columnCount(const QModelIndex& parent = QModelIndex()) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Place {
        const StackTreeNode* parent = nullptr;
        int row = 0;
    };
    void place(const StackTreeNode& node, const StackTreeNode* parent, int row);

    StackTreeData data_;
    std::unordered_map<const StackTreeNode*, Place> places_;
};

}  // namespace allocscope::views
