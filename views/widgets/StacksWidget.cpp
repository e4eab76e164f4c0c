#include "views/widgets/StacksWidget.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSaveFile>
#include <QScrollBar>
#include <QSignalBlocker>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTreeView>
#include <QVBoxLayout>

#include <algorithm>
#include <limits>

#include "views/util/Formatting.h"
#include "views/widgets/IcicleWidget.h"
#include "views/widgets/LiveTensorsModel.h"
#include "views/widgets/StackTreeModel.h"

namespace allocscope::views {
namespace {
constexpr int kExpandDepth = 8;
}  // namespace

StacksWidget::StacksWidget(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    layout->setSpacing(4);

    auto* bar = new QHBoxLayout;
    bar->setSpacing(6);
    auto* atLabel = new QLabel(tr("&At:"), this);
    at_ = new QComboBox(this);
    at_->addItem(tr("Scrubber's event"));
    at_->addItem(tr("Peak allocated"));
    at_->setToolTip(tr("Which event's live blocks to show: the scrubber's, or the first event where allocated bytes reach their maximum"));
    atLabel->setBuddy(at_);
    auto* diffLabel = new QLabel(tr("&Diff:"), this);
    diff_ = new QComboBox(this);
    diff_->addItem(tr("Off"));
    diff_->addItem(tr("Another event"));
    diff_->addItem(tr("Another run, same op"));
    diff_->setToolTip(tr("Compare with another event of this run, or with another run at the same program op (two configs, two snapshots):\n"
                         "the tree shows which call stacks gained (+) or released (−) bytes"));
    diffLabel->setBuddy(diff_);
    otherEvent_ = new QSpinBox(this);
    otherEvent_->setRange(0, 0);
    otherEvent_->setPrefix(tr("event "));
    otherEvent_->setToolTip(tr("The event to compare with (the tree's Before column)"));
    otherEvent_->setKeyboardTracking(false);
    otherRun_ = new QComboBox(this);
    otherRun_->setToolTip(tr("The run to compare with, at the same program op (runs of one program are aligned by op)"));
    otherRun_->setMinimumContentsLength(14);
    otherRun_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    hide_ = new QCheckBox(tr("Hide PyTorch &internals"), this);
    hide_->setToolTip(tr("Fold away frames under torch/, site-packages and Python's own machinery (<frozen …>, importlib, runpy, threading),\n"
                         "so the tree goes straight from your code to your code"));
    bar->addWidget(atLabel);
    bar->addWidget(at_);
    bar->addSpacing(8);
    bar->addWidget(diffLabel);
    bar->addWidget(diff_);
    bar->addWidget(otherEvent_);
    bar->addWidget(otherRun_);
    bar->addSpacing(8);
    bar->addWidget(hide_);
    bar->addStretch(1);
    layout->addLayout(bar);

    status_ = new QLabel(this);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    status_->setWordWrap(true);
    layout->addWidget(status_);

    subTabs_ = new QTabWidget(this);
    subTabs_->setDocumentMode(true);
    auto* split = new QSplitter(Qt::Horizontal, subTabs_);
    tree_ = new QTreeView(split);
    treeModel_ = new StackTreeModel(tree_);
    tree_->setModel(treeModel_);
    tree_->setUniformRowHeights(true);
    tree_->setAlternatingRowColors(true);
    tree_->setIndentation(12);  // deep Python stacks: keep the frame names readable
    tree_->setToolTip(tr("Bytes by call stack, caller to callee. Click a frame to select its largest block in the segment map and inspector"));
    tree_->header()->setStretchLastSection(false);
    tree_->setTreePosition(0);  // the tree is drawn in the frame column, shown last (see setTree)
    icicle_ = new IcicleWidget(split);
    split->addWidget(tree_);
    split->addWidget(icicle_);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    split->setSizes({650, 350});
    split->setChildrenCollapsible(false);
    subTabs_->addTab(split, tr("Call stacks"));

    auto* tensors = new QWidget(subTabs_);
    auto* tensorLayout = new QVBoxLayout(tensors);
    tensorLayout->setContentsMargins(0, 4, 0, 0);
    auto* tensorBar = new QHBoxLayout;
    tensorSummary_ = new QLabel(tensors);
    export_ = new QPushButton(tr("&Export CSV…"), tensors);
    export_->setToolTip(tr("Save the live tensors table (every row, raw byte counts) as CSV"));
    tensorBar->addWidget(tensorSummary_, 1);
    tensorBar->addWidget(export_);
    tensorLayout->addLayout(tensorBar);
    table_ = new QTableView(tensors);
    tensorModel_ = new LiveTensorsModel(table_);
    proxy_ = new QSortFilterProxyModel(table_);
    proxy_->setSourceModel(tensorModel_);
    proxy_->setSortRole(LiveTensorsModel::SortRole);
    table_->setModel(proxy_);
    table_->setSortingEnabled(true);
    table_->sortByColumn(LiveTensorsModel::SizeColumn, Qt::DescendingOrder);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->setAlternatingRowColors(true);
    table_->verticalHeader()->hide();
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);  // compact rows: hundreds of blocks
    table_->horizontalHeader()->setSectionResizeMode(LiveTensorsModel::FrameColumn, QHeaderView::Stretch);
    table_->setToolTip(tr("Every block live at the event; click a row to select the block in the segment map and inspector, click a header to sort"));
    tensorLayout->addWidget(table_, 1);
    subTabs_->addTab(tensors, tr("&Live tensors"));
    subTabs_->setTabToolTip(0, tr("Bytes by call stack: the tree and an icicle chart of it"));
    subTabs_->setTabToolTip(1, tr("The blocks live at the event: size, requested size, top user frame, age, stream, pool, segment"));
    layout->addWidget(subTabs_, 1);

    const auto changed = [this] {
        updateDiffControls();
        if (!quiet_) emit choiceChanged();
    };
    connect(at_, &QComboBox::currentIndexChanged, this, changed);
    connect(diff_, &QComboBox::currentIndexChanged, this, changed);
    connect(otherEvent_, &QSpinBox::valueChanged, this, changed);
    connect(otherRun_, &QComboBox::currentIndexChanged, this, changed);
    connect(hide_, &QCheckBox::toggled, this, changed);
    connect(tree_->selectionModel(), &QItemSelectionModel::currentChanged, this, [this] { syncIcicleFromTree(); });
    // A click, or Return on the keyboard, selects the block in the window.
    const auto frameChosen = [this](const QModelIndex& index) {
        const StackTreeNode* node = treeModel_->node(index);
        if (node && node->largestBlock != 0) emit blockActivated(node->largestBlock);
    };
    connect(tree_, &QTreeView::clicked, this, frameChosen);
    connect(tree_, &QTreeView::activated, this, frameChosen);
    connect(icicle_, &IcicleWidget::nodeSelected, this, [this](const QList<int>& path) {
        selectTreePath(path);
        const QModelIndex index = tree_->currentIndex();
        const StackTreeNode* node = treeModel_->node(index);
        if (node && node->largestBlock != 0) emit blockActivated(node->largestBlock);
    });
    const auto tensorChosen = [this](const QModelIndex& index) {
        emit blockActivated(proxy_->data(index, LiveTensorsModel::AddressRole).toULongLong());
    };
    connect(table_, &QTableView::clicked, this, tensorChosen);
    connect(table_, &QTableView::activated, this, tensorChosen);
    connect(export_, &QPushButton::clicked, this, &StacksWidget::showExportDialog);
    updateDiffControls();
    setTree({});
    setTensors({});
}

StacksChoice StacksWidget::choice() const {
    StacksChoice c;
    c.at = at_->currentIndex() == 1 ? StacksChoice::At::Peak : StacksChoice::At::Scrubber;
    c.diff = diff_->currentIndex() == 1 ? StacksChoice::Diff::Event : diff_->currentIndex() == 2 ? StacksChoice::Diff::Run : StacksChoice::Diff::Off;
    c.otherEvent = otherEvent_->value();
    c.otherRun = otherRun_->currentData().toInt();
    c.hideInternals = hide_->isChecked();
    return c;
}

void StacksWidget::setChoice(const StacksChoice& c) {
    quiet_ = true;
    at_->setCurrentIndex(c.at == StacksChoice::At::Peak ? 1 : 0);
    diff_->setCurrentIndex(c.diff == StacksChoice::Diff::Event ? 1 : c.diff == StacksChoice::Diff::Run ? 2 : 0);
    otherEvent_->setValue(static_cast<int>(c.otherEvent));
    const int row = otherRun_->findData(c.otherRun);
    if (row >= 0) otherRun_->setCurrentIndex(row);
    hide_->setChecked(c.hideInternals);
    quiet_ = false;
    updateDiffControls();
    emit choiceChanged();
}

void StacksWidget::setRuns(const QList<QPair<int, QString>>& runs) {
    const int keep = otherRun_->currentData().toInt();
    {
        const QSignalBlocker block(otherRun_);
        otherRun_->clear();
        for (const auto& [number, label] : runs) otherRun_->addItem(tr("run %1 · %2").arg(number).arg(label), number);
        const int row = otherRun_->findData(keep);
        otherRun_->setCurrentIndex(row >= 0 ? row : (runs.isEmpty() ? -1 : 0));
    }
    updateDiffControls();
}

void StacksWidget::setEventCount(qint64 count) {
    const QSignalBlocker block(otherEvent_);
    // QSpinBox is int-bounded: a run of more than 2^31 events compares with events below that.
    otherEvent_->setRange(0, static_cast<int>(std::clamp<qint64>(count - 1, 0, std::numeric_limits<int>::max())));
}

void StacksWidget::updateDiffControls() {
    const int mode = diff_->currentIndex();
    otherEvent_->setVisible(mode == 1);
    otherRun_->setVisible(mode == 2);
    otherRun_->setEnabled(otherRun_->count() > 0);
    if (mode == 2 && otherRun_->count() == 0) otherRun_->setToolTip(tr("The session has no other run to compare with"));
}

void StacksWidget::setTree(StackTreeData value) {
    const QList<int> selected = icicle_->selectedPath();
    treeModel_->setTree(std::move(value));
    icicle_->setTree(treeModel_->treeData());
    // Numbers first, the frames last: the deep, indented frame column is as wide as its text
    // (the view scrolls sideways) while the bytes stay at the left edge.
    QHeaderView* header = tree_->header();
    const int last = treeModel_->columnCount() - 1;
    if (header->visualIndex(0) != last) header->moveSection(header->visualIndex(0), last);
    for (int c = 0; c <= last; ++c) header->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    if (!treeModel_->treeData().valid) return;
    // Open the heavy path: the root, then each node's largest child while it holds most of its
    // parent's bytes (where a single call chain dominates, it is read without clicking).
    QModelIndex at = treeModel_->index(0, 0);
    tree_->expand(at);
    for (int depth = 0; depth < kExpandDepth; ++depth) {
        const StackTreeNode* node = treeModel_->node(at);
        if (!node || node->children.empty()) break;
        const StackTreeNode& first = node->children.front();
        const auto weight = [&](const StackTreeNode& n) { return treeModel_->treeData().diff ? std::max(n.bytes[0], n.bytes[1]) : n.bytes[0]; };
        if (depth > 0 && weight(first) * 2 < weight(*node)) break;
        at = treeModel_->index(0, 0, at);
        tree_->expand(at);
    }
    selectTreePath(selected);
}

void StacksWidget::setTensors(LiveTensorsData value) {
    tensorModel_->setTensors(std::move(value));
    const LiveTensorsData& t = tensorModel_->tensors();
    export_->setEnabled(t.valid);
    if (!t.valid) {
        tensorSummary_->setText(tr("No run selected"));
        return;
    }
    tensorSummary_->setText(tr("%1 live blocks, %2 at event %3")
                                .arg(Formatting::count(static_cast<qint64>(t.rows.size())), Formatting::bytes(tensorModel_->totalBytes()),
                                     Formatting::count(t.event)));
    table_->resizeColumnsToContents();
    table_->horizontalHeader()->setSectionResizeMode(LiveTensorsModel::FrameColumn, QHeaderView::Stretch);
}

void StacksWidget::setStatus(const QString& text, bool error) {
    status_->setText(text);
    status_->setStyleSheet(error ? QStringLiteral("color: #d03a2f;") : QString());
}

QString StacksWidget::statusText() const { return status_->text(); }

void StacksWidget::syncIcicleFromTree() {
    QList<int> path;
    for (QModelIndex i = tree_->currentIndex().siblingAtColumn(0); i.isValid() && i.parent().isValid(); i = i.parent()) path.prepend(i.row());
    icicle_->setSelectedPath(path);
}

void StacksWidget::selectTreePath(const QList<int>& path) {
    QModelIndex at = treeModel_->index(0, 0);
    if (!at.isValid()) return;
    for (int row : path) {
        const QModelIndex child = treeModel_->index(row, 0, at);
        if (!child.isValid()) break;
        tree_->expand(at);
        at = child;
    }
    tree_->setCurrentIndex(at);
    tree_->scrollTo(at);
    tree_->horizontalScrollBar()->setValue(0);  // scrollTo may scroll to the frame: keep the bytes in view
}

bool StacksWidget::exportCsv(const QString& path, QString* error) const {
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Text)) {
        if (error) *error = tr("Cannot write %1: %2").arg(path, file.errorString());
        return false;
    }
    file.write(tensorModel_->toCsv().toUtf8());
    if (!file.commit()) {
        if (error) *error = tr("Cannot write %1: %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

void StacksWidget::showExportDialog() {
    QString path = QFileDialog::getSaveFileName(this, tr("Export Live Tensors"), tr("live-tensors-event-%1.csv").arg(tensorModel_->tensors().event),
                                                tr("CSV files (*.csv)"));
    if (path.isEmpty()) return;
    if (QFileInfo(path).suffix().isEmpty()) path += QStringLiteral(".csv");
    QString why;
    if (!exportCsv(path, &why)) QMessageBox::warning(this, tr("Export failed"), why);
    else setStatus(tr("Saved %1 rows to %2").arg(tensorModel_->rowCount()).arg(path));
}

}  // namespace allocscope::views
