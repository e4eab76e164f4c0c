// The Stacks tab's views on small hand-made data: both item models pass QAbstractItemModelTester
// (one side and a diff); the tree's columns say bytes, blocks, share, and for a diff the signed
// change; the live tensors table sorts bytes as numbers and exports every row as CSV with raw
// values (a frame holding a comma is quoted); the icicle chart lays the largest child under the
// left of its parent and a click on it selects the same node in the tree; a block without frames
// reads "no stack recorded" with the reason as its tooltip.
#include <QtTest>

#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QTreeView>

#include "views/widgets/IcicleWidget.h"
#include "views/widgets/LiveTensorsModel.h"
#include "views/widgets/StackTreeModel.h"
#include "views/widgets/StacksWidget.h"

namespace views = allocscope::views;
using Kind = views::StackTreeNode::Kind;

namespace {

views::StackTreeNode node(Kind kind, const QString& label, qint64 before, qint64 after = 0, quint64 block = 0) {
    views::StackTreeNode n;
    n.kind = kind;
    n.label = label;
    n.bytes[0] = before;
    n.bytes[1] = after;
    n.blocks[0] = before > 0 ? 1 : 0;
    n.blocks[1] = after > 0 ? 1 : 0;
    n.largestBlock = block;
    return n;
}

// all (4 MiB) -> main (3 MiB) -> {train 2 MiB, eval 1 MiB}; no stack 1 MiB.
views::StackTreeData sample(bool diff) {
    views::StackTreeData d;
    d.valid = true;
    d.diff = diff;
    d.beforeLabel = "event 1";
    d.afterLabel = "event 2";
    const qint64 MiB = 1 << 20;
    d.root = node(Kind::Root, "all live blocks", 4 * MiB, diff ? 3 * MiB : 0);
    views::StackTreeNode main = node(Kind::Frame, "main (train.py:10)", 3 * MiB, diff ? 3 * MiB : 0, 0x1000);
    main.children.push_back(node(Kind::Frame, "train (train.py:20)", 2 * MiB, diff ? 3 * MiB : 0, 0x1000));
    main.children.push_back(node(Kind::Frame, "eval (train.py:30)", 1 * MiB, 0, 0x2000));
    d.root.children.push_back(main);
    views::StackTreeNode none = node(Kind::NoStack, "no stack recorded", 1 * MiB, 0, 0x3000);
    none.toolTip = "An RMM CSV log records sizes and addresses only: it has no call stacks.";
    d.root.children.push_back(none);
    return d;
}

views::LiveTensorsData tensors() {
    views::LiveTensorsData t;
    t.valid = true;
    t.run = 1;
    t.event = 100;
    t.noStackWhy = "An RMM CSV log records sizes and addresses only: it has no call stacks.";
    const auto row = [](quint64 address, quint64 size, const QString& frame, qint64 allocEvent) {
        views::LiveTensorRow r;
        r.address = address;
        r.size = size;
        r.requested = size - 1;
        r.topFrame = frame.isEmpty() ? QString("no stack recorded") : frame;
        r.hasStack = !frame.isEmpty();
        r.stackText = frame;
        r.allocEvent = allocEvent;
        r.age = allocEvent < 0 ? -1 : 100 - allocEvent;
        r.pool = "default pool";
        r.segment = address & ~quint64(0xfffff);
        return r;
    };
    t.rows.push_back(row(0x7f0000000000, 2048, "step (train.py:5)", 90));
    t.rows.push_back(row(0x7f0000100000, 10 << 20, "forward (model.py:7, in a, b)", 10));  // a comma: quoted in CSV
    t.rows.push_back(row(0x7f0000200000, 512, "", -1));
    return t;
}

}  // namespace

class TestStacksWidgets : public QObject {
    Q_OBJECT

private slots:
    void treeModelPassesTheTester_data() {
        QTest::addColumn<bool>("diff");
        QTest::newRow("one side") << false;
        QTest::newRow("diff") << true;
    }
    void treeModelPassesTheTester() {
        QFETCH(bool, diff);
        views::StackTreeModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setTree(sample(diff));
        model.setTree(sample(!diff));  // a reset to the other column set
        model.setTree(sample(diff));
        QCOMPARE(model.rowCount(), 1);
        QCOMPARE(model.columnCount(), diff ? int(views::StackTreeModel::NUM_DIFF_COLUMNS) : int(views::StackTreeModel::NUM_SINGLE_COLUMNS));
        const QModelIndex root = model.index(0, 0);
        QCOMPARE(model.rowCount(root), 2);
        const QModelIndex main = model.index(0, 0, root);
        QCOMPARE(model.data(main).toString(), QString("main (train.py:10)"));
        QCOMPARE(model.rowCount(main), 2);
        QCOMPARE(model.parent(model.index(1, 0, main)), main);
        QCOMPARE(model.node(model.indexOf(model.node(main))), model.node(main));
        if (diff) {
            const QModelIndex train = model.index(0, 0, main);
            QCOMPARE(model.data(train.siblingAtColumn(views::StackTreeModel::ChangeColumn)).toString(), QString("+1.00 MiB"));
            QCOMPARE(model.data(model.index(1, views::StackTreeModel::ChangeColumn, main)).toString(), QString("-1.00 MiB"));
            QCOMPARE(model.data(root.siblingAtColumn(views::StackTreeModel::ChangeColumn), views::StackTreeModel::SortRole).toLongLong(),
                     -qint64(1 << 20));
            QCOMPARE(model.headerData(views::StackTreeModel::BeforeColumn, Qt::Horizontal).toString(), QString("event 1"));
        } else {
            QCOMPARE(model.data(main.siblingAtColumn(views::StackTreeModel::BytesColumn)).toString(), QString("3.00 MiB"));
            QCOMPARE(model.data(main.siblingAtColumn(views::StackTreeModel::ShareColumn)).toString(), QString("75.0 %"));
            const QModelIndex none = model.index(1, 0, root);
            QVERIFY(model.data(none, Qt::ToolTipRole).toString().contains("RMM CSV"));
        }
        model.setTree({});
        QCOMPARE(model.rowCount(), 0);
    }

    void tensorsModelSortsAndExports() {
        views::LiveTensorsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setTensors(tensors());
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.totalBytes(), qint64(2048 + (10 << 20) + 512));
        QSortFilterProxyModel proxy;
        proxy.setSourceModel(&model);
        proxy.setSortRole(views::LiveTensorsModel::SortRole);
        proxy.sort(views::LiveTensorsModel::SizeColumn, Qt::DescendingOrder);
        // 10 MiB > 2 KiB > 512 B: numbers, not the text "512 B" > "2.00 KiB" > "10.00 MiB".
        QCOMPARE(proxy.data(proxy.index(0, views::LiveTensorsModel::AddressColumn), views::LiveTensorsModel::AddressRole).toULongLong(),
                 quint64(0x7f0000100000));
        QCOMPARE(proxy.data(proxy.index(2, views::LiveTensorsModel::AddressColumn), views::LiveTensorsModel::AddressRole).toULongLong(),
                 quint64(0x7f0000200000));
        proxy.sort(views::LiveTensorsModel::AgeColumn, Qt::DescendingOrder);  // allocated before the history: the oldest
        QCOMPARE(proxy.data(proxy.index(0, views::LiveTensorsModel::AgeColumn)).toString(), QString("before history"));

        const QModelIndex noStack = model.index(2, views::LiveTensorsModel::FrameColumn);
        QCOMPARE(model.data(noStack).toString(), QString("no stack recorded"));
        QVERIFY(model.data(noStack, Qt::ToolTipRole).toString().contains("no call stacks"));

        const QStringList lines = model.toCsv().split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 4);
        QCOMPARE(lines[0], QString("size,requested_size,top_user_frame,age_events,alloc_event,stream,pool,segment,address,state"));
        QCOMPARE(lines[1], QString("2048,2047,step (train.py:5),10,90,0,default pool,0x7f0000000000,0x7f0000000000,active_allocated"));
        QCOMPARE(lines[2], QString("10485760,10485759,\"forward (model.py:7, in a, b)\",90,10,0,default pool,0x7f0000100000,0x7f0000100000,active_allocated"));
        QCOMPARE(lines[3], QString("512,511,no stack recorded,,,0,default pool,0x7f0000200000,0x7f0000200000,active_allocated"));
    }

    void exportWritesTheFile() {
        views::StacksWidget widget;
        widget.setTensors(tensors());
        QTemporaryDir dir;
        const QString path = dir.filePath("t.csv");
        QString error;
        QVERIFY2(widget.exportCsv(path, &error), qPrintable(error));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(QString::fromUtf8(file.readAll()), widget.tensorModel()->toCsv());
        QVERIFY(!widget.exportCsv(dir.filePath("missing/dir/t.csv"), &error));
        QVERIFY(error.contains("missing/dir/t.csv"));
    }

    void icicleFollowsAndDrivesTheTree() {
        views::StacksWidget widget;
        widget.resize(900, 400);
        widget.show();
        QVERIFY(QTest::qWaitForWindowExposed(&widget));
        widget.setTree(sample(false));
        views::IcicleWidget* icicle = widget.icicle();
        const int row = icicle->fontMetrics().height() + 6;
        // Depth 1 starts with main (3 of 4 MiB: the left three quarters), then no stack.
        QList<int> path;
        QVERIFY(icicle->pathAt(QPointF(icicle->width() * 0.1, row * 1.5), &path));
        QCOMPARE(path, QList<int>({0}));
        QVERIFY(icicle->pathAt(QPointF(icicle->width() * 0.9, row * 1.5), &path));
        QCOMPARE(path, QList<int>({1}));
        // Depth 2 under main: train (2/3 of main), then eval.
        QVERIFY(icicle->pathAt(QPointF(icicle->width() * 0.6, row * 2.5), &path));
        QCOMPARE(path, QList<int>({0, 1}));

        QSignalSpy blocks(&widget, &views::StacksWidget::blockActivated);
        QTest::mouseClick(icicle, Qt::LeftButton, {}, QPoint(int(icicle->width() * 0.6), int(row * 2.5)));
        const views::StackTreeNode* current = widget.treeModel()->node(widget.tree()->currentIndex());
        QVERIFY(current);
        QCOMPARE(current->label, QString("eval (train.py:30)"));
        QCOMPARE(blocks.count(), 1);
        QCOMPARE(blocks.at(0).at(0).toULongLong(), quint64(0x2000));

        // The tree's current row is outlined in the chart.
        widget.tree()->setCurrentIndex(widget.treeModel()->index(1, 0, widget.treeModel()->index(0, 0)));
        QCOMPARE(icicle->selectedPath(), QList<int>({1}));

        // Double-click zooms in: main fills the width.
        QTest::mouseDClick(icicle, Qt::LeftButton, {}, QPoint(int(icicle->width() * 0.1), int(row * 1.5)));
        QCOMPARE(icicle->zoomPath(), QList<int>({0}));
        QVERIFY(icicle->pathAt(QPointF(icicle->width() * 0.5, row * 0.5), &path));
        QCOMPARE(path, QList<int>({0}));
        QTest::keyClick(icicle, Qt::Key_Backspace);
        QCOMPARE(icicle->zoomPath(), QList<int>());
    }

    void diffControlsFollowTheChoice() {
        views::StacksWidget widget;
        widget.setRuns({{2, "train_gpt"}});
        widget.setEventCount(500);
        QSignalSpy changed(&widget, &views::StacksWidget::choiceChanged);
        views::StacksChoice c;
        c.diff = views::StacksChoice::Diff::Run;
        c.otherRun = 2;
        c.hideInternals = true;
        widget.setChoice(c);
        QCOMPARE(changed.count(), 1);
        const views::StacksChoice back = widget.choice();
        QCOMPARE(back.diff, views::StacksChoice::Diff::Run);
        QCOMPARE(back.otherRun, 2);
        QVERIFY(back.hideInternals);
        widget.hideInternals()->setChecked(false);
        QCOMPARE(changed.count(), 2);
    }
};

QTEST_MAIN(TestStacksWidgets)
#include "TestStacksWidgets.moc"
