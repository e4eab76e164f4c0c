#include "views/widgets/StackTreeModel.h"

#include <QBrush>
#include <QColor>

#include "views/util/Formatting.h"

namespace allocscope::views {
namespace {

QString signedBytes(qint64 bytes) {
    if (bytes == 0) return QStringLiteral("0");
    return (bytes > 0 ? QStringLiteral("+") : QString()) + Formatting::bytes(bytes);
}

QString signedCount(qint64 count) {
    return (count > 0 ? QStringLiteral("+") : QString()) + Formatting::count(count);
}

}  // namespace

StackTreeModel::StackTreeModel(QObject* parent) : QAbstractItemModel(parent) {}

void StackTreeModel::setTree(StackTreeData data) {
    beginResetModel();
    data_ = std::move(data);
    places_.clear();
    if (data_.valid) place(data_.root, nullptr, 0);
    endResetModel();
}

void StackTreeModel::place(const StackTreeNode& node, const StackTreeNode* parent, int row) {
    places_[&node] = Place{parent, row};
    for (std::size_t i = 0; i < node.children.size(); ++i) place(node.children[i], &node, static_cast<int>(i));
}

const StackTreeNode* StackTreeModel::node(const QModelIndex& index) const {
    return index.isValid() ? static_cast<const StackTreeNode*>(index.internalPointer()) : nullptr;
}

QModelIndex StackTreeModel::indexOf(const StackTreeNode* node, int column) const {
    const auto it = places_.find(node);
    if (it == places_.end()) return {};
    return createIndex(it->second.row, column, const_cast<StackTreeNode*>(node));
}

QModelIndex StackTreeModel::index(int row, int column, const QModelIndex& parent) const {
    if (row < 0 || column < 0 || column >= columnCount(parent)) return {};
    if (!parent.isValid()) {
        if (!data_.valid || row != 0) return {};
        return createIndex(0, column, const_cast<StackTreeNode*>(&data_.root));
    }
    if (parent.column() != 0) return {};
    const StackTreeNode* p = node(parent);
    if (!p || row >= static_cast<int>(p->children.size())) return {};
    return createIndex(row, column, const_cast<StackTreeNode*>(&p->children[static_cast<std::size_t>(row)]));
}

QModelIndex StackTreeModel::parent(const QModelIndex& child) const {
    const StackTreeNode* n = node(child);
    if (!n) return {};
    const auto it = places_.find(n);
    if (it == places_.end() || !it->second.parent) return {};
    return indexOf(it->second.parent, 0);
}

int StackTreeModel::rowCount(const QModelIndex& parent) const {
    if (!parent.isValid()) return data_.valid ? 1 : 0;
    if (parent.column() != 0) return 0;
    const StackTreeNode* n = node(parent);
    return n ? static_cast<int>(n->children.size()) : 0;
}

int StackTreeModel::columnCount(const QModelIndex&) const { return data_.diff ? static_cast<int>(NUM_DIFF_COLUMNS) : static_cast<int>(NUM_SINGLE_COLUMNS); }

QVariant StackTreeModel::data(const QModelIndex& index, int role) const {
    const StackTreeNode* n = node(index);
    if (!n) return {};
    const int c = index.column();
    if (role == Qt::ToolTipRole) return n->toolTip.isEmpty() ? n->label : n->toolTip;
    if (role == Qt::TextAlignmentRole && c > 0) return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ForegroundRole && n->kind != StackTreeNode::Kind::Frame && c == 0) return QBrush(QColor(128, 128, 128));
    if (data_.diff) {
        if (role == Qt::ForegroundRole && (c == ChangeColumn || c == BlocksChangeColumn)) {
            const qint64 d = c == ChangeColumn ? n->deltaBytes() : n->deltaBlocks();
            if (d > 0) return QBrush(QColor(0xd0, 0x3a, 0x2f));  // more memory held: the direction to look at
            if (d < 0) return QBrush(QColor(0x2e, 0x9a, 0x4a));
        }
        if (role == SortRole) {
            switch (c) {
                case DiffFrameColumn: return n->label;
                case ChangeColumn: return n->deltaBytes();
                case BeforeColumn: return n->bytes[0];
                case AfterColumn: return n->bytes[1];
                case BlocksChangeColumn: return n->deltaBlocks();
                default: return {};
            }
        }
        if (role != Qt::DisplayRole) return {};
        switch (c) {
            case DiffFrameColumn: return n->label;
            case ChangeColumn: return signedBytes(n->deltaBytes());
            case BeforeColumn: return Formatting::bytes(n->bytes[0]);
            case AfterColumn: return Formatting::bytes(n->bytes[1]);
            case BlocksChangeColumn: return signedCount(n->deltaBlocks());
            default: return {};
        }
    }
    const double share = data_.root.bytes[0] > 0 ? static_cast<double>(n->bytes[0]) / static_cast<double>(data_.root.bytes[0]) : 0.0;
    if (role == SortRole) {
        switch (c) {
            case FrameColumn: return n->label;
            case BytesColumn: return n->bytes[0];
            case BlocksColumn: return n->blocks[0];
            case ShareColumn: return share;
            default: return {};
        }
    }
    if (role != Qt::DisplayRole) return {};
    switch (c) {
        case FrameColumn: return n->label;
        case BytesColumn: return Formatting::bytes(n->bytes[0]);
        case BlocksColumn: return Formatting::count(n->blocks[0]);
        case ShareColumn: return Formatting::percent(share);
        default: return {};
    }
}

QVariant StackTreeModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal) return {};
    if (role == Qt::ToolTipRole) {
        if (data_.diff) {
            switch (section) {
                case ChangeColumn: return tr("Bytes gained (+) or released (−) under this frame: %1 minus %2").arg(data_.afterLabel, data_.beforeLabel);
                case BeforeColumn: return tr("Bytes under this frame at %1").arg(data_.beforeLabel);
                case AfterColumn: return tr("Bytes under this frame at %1").arg(data_.afterLabel);
                case BlocksChangeColumn: return tr("Live blocks gained or released under this frame");
                default: return tr("Call stack, caller to callee: a frame's children are the functions it called");
            }
        }
        switch (section) {
            case BytesColumn: return tr("Block bytes allocated under this frame (what allocated_bytes counts)");
            case BlocksColumn: return tr("Live blocks allocated under this frame");
            case ShareColumn: return tr("Share of all live bytes");
            default: return tr("Call stack, caller to callee: a frame's children are the functions it called");
        }
    }
    if (role != Qt::DisplayRole) return {};
    if (data_.diff) {
        switch (section) {
            case DiffFrameColumn: return tr("Call stack");
            case ChangeColumn: return tr("Change");
            case BeforeColumn: return data_.beforeLabel.isEmpty() ? tr("Before") : data_.beforeLabel;
            case AfterColumn: return data_.afterLabel.isEmpty() ? tr("After") : data_.afterLabel;
            case BlocksChangeColumn: return tr("Blocks ±");
            default: return {};
        }
    }
    switch (section) {
        case FrameColumn: return tr("Call stack");
        case BytesColumn: return tr("Bytes");
        case BlocksColumn: return tr("Blocks");
        case ShareColumn: return tr("Share");
        default: return {};
    }
}

}  // namespace allocscope::views
