// The Stacks tab in the main window, against the CLI and PyTorch's own numbers, on shared traces:
// - train_gpt (default config) with the scrubber at the allocated peak: the tree's root holds
//   PyTorch's allocated_bytes.all.peak (4,572,544,000 B) and the same bytes and blocks as
//   `allocscope-cli stacks --at peak`; the live tensors table has the rows and byte sum of
//   `blocks --at peak`; its CSV export has them too; "hide PyTorch internals" leaves no frame of
//   torch/ or Python's own in the tree, and the same bytes; a click on a tensor selects that block in the segment map.
// - train_gpt default + expandable in one session: the diff with the other run at the same op
//   has root change = the difference of the two runs' allocated bytes after that op (each read
//   with `blocks --at event:E`).
// - frag101's RMM CSV log (no frames): the tree's only child and every table row read "no stack
//   recorded", with a tooltip saying an RMM log has no call stacks; a diff with another run in a
//   session of one run says there is none.
#include <QtTest>

#include <QCheckBox>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTemporaryDir>

#include "app/gui/CompareRunLoader.h"
#include "app/gui/MainWindow.h"
#include "app/gui/StacksPage.h"
#include "storage/session/UserFrames.h"
#include "storage/session/LiveBlocks.h"
#include "storage/session/ProgramRecording.h"
#include "storage/session/SessionReader.h"
#include "storage/session/SessionWriter.h"
#include "views/widgets/LiveTensorsModel.h"
#include "views/widgets/RunListModel.h"
#include "views/widgets/RunListWidget.h"
#include "views/widgets/SegmentMapWidget.h"
#include "views/widgets/StackTreeModel.h"
#include "views/widgets/StacksWidget.h"

using allocscope::app::MainWindow;
namespace storage = allocscope::storage;
namespace views = allocscope::views;
namespace app = allocscope::app;

namespace {
constexpr int kTimeout = 120000;
constexpr qint64 kPyTorchPeak = 4'572'544'000;  // train_gpt__default.json: allocated_bytes.all.peak

QString data(const QString& file) { return qEnvironmentVariable("ALLOCSCOPE_TEST_DATA") + "/" + file; }

void importInto(const QString& session, const QStringList& traces) {
    storage::SessionWriter writer(session.toStdString());
    storage::ImportTarget target;
    target.totalMemory = 85'017'493'504ull;  // the recording's H100
    for (const QString& t : traces) storage::importTraceFile(writer, data(t).toStdString(), target);
    writer.flush();
}

QByteArray cli(const QStringList& args) {
    QProcess p;
    p.start(qEnvironmentVariable("ALLOCSCOPE_CLI"), args);
    if (!p.waitForFinished(kTimeout) || p.exitCode() != 0) {
        qWarning() << "allocscope-cli" << args << p.readAllStandardError();
        return {};
    }
    return p.readAllStandardOutput();
}

// `blocks --json` at a point: (count, byte sum).
std::pair<qint64, qint64> cliBlocks(const QString& db, int run, const QString& at) {
    const QJsonArray blocks = QJsonDocument::fromJson(cli({"blocks", "--db", db, "--run", QString::number(run), "--at", at, "--json"})).array();
    qint64 bytes = 0;
    for (const QJsonValue& b : blocks) bytes += b.toObject()["size"].toInteger();
    return {blocks.size(), bytes};
}

void openRun(MainWindow& window, const QString& session, int run = 1) {
    QVERIFY(window.openSessionFile(session));
    QTRY_VERIFY_WITH_TIMEOUT(window.runList()->model()->rowCount() > 0, kTimeout);
    window.selectRun(run);
    QTRY_VERIFY_WITH_TIMEOUT(window.currentFrame().run == run && !window.currentFrame().approximate, kTimeout);
}

// Waits until the tab shows `event` of the current run, computed for the current choice.
void waitForStacks(MainWindow& window, qint64 event) {
    app::StacksPage* page = window.stacksPage();
    QTRY_VERIFY_WITH_TIMEOUT(!page->isComputing() && page->result().run == window.currentRun() &&
                                 (event < 0 || page->result().event == event),
                             kTimeout);
}

// Frame nodes of a tree whose file is PyTorch's or Python's own, and all nodes.
void countFrames(const views::StackTreeNode& node, int& internal, int& all) {
    ++all;
    if (node.kind == views::StackTreeNode::Kind::Frame) {
        const QString file = node.toolTip.section('\n', 1).section(", line", 0, 0);  // "name\nfile, line N"
        if (storage::UserFrames::internal({file.toStdString(), 0, node.label.toStdString()})) ++internal;
    }
    for (const views::StackTreeNode& child : node.children) countFrames(child, internal, all);
}

std::uint64_t peakOf(const QString& session, int run) {
    storage::SessionReader reader(session.toStdString(), false);
    return storage::LiveBlocks::peakEvent(reader, run);
}

}  // namespace

class TestStacksTab : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    QString gpt_;
    QString two_;

private slots:
    void initTestCase() {
        QCoreApplication::setOrganizationName("AllocScopeTest");
        QCoreApplication::setApplicationName("TestStacksTab");
        QSettings().clear();
        QVERIFY(dir_.isValid());
        gpt_ = dir_.filePath("gpt.allocscope");
        importInto(gpt_, {"traces/train_gpt__default.pickle"});
    }

    void peakTreeAndTensorsMatchTheCliAndPyTorch() {
        MainWindow window;
        window.show();
        openRun(window, gpt_);
        window.showView("stacks");
        const qint64 peak = static_cast<qint64>(peakOf(gpt_, 1));
        window.goToEvent(peak);
        waitForStacks(window, peak);
        views::StacksWidget* w = window.stacksPage()->widget();
        const views::StackTreeData& tree = w->treeModel()->treeData();
        QVERIFY(tree.valid && !tree.diff);
        QCOMPARE(tree.root.bytes[0], kPyTorchPeak);
        const QJsonObject cliRoot = QJsonDocument::fromJson(cli({"stacks", "--db", gpt_, "--run", "1", "--at", "peak", "--json"})).object();
        QCOMPARE(tree.root.bytes[0], cliRoot["bytes"].toInteger());
        QCOMPARE(tree.root.blocks[0], cliRoot["blocks"].toInteger());
        QCOMPARE(qint64(tree.root.children.size()), qint64(cliRoot["children"].toArray().size()));
        QCOMPARE(tree.root.children.front().label, cliRoot["children"].toArray()[0].toObject()["label"].toString());

        // The live tensors: the rows and bytes of `blocks --at peak`.
        const auto [count, bytes] = cliBlocks(gpt_, 1, "peak");
        QCOMPARE(qint64(w->tensorModel()->rowCount()), count);
        QCOMPARE(w->tensorModel()->totalBytes(), bytes);
        QCOMPARE(bytes, kPyTorchPeak);
        // ... and its CSV: one line per row, the sizes adding up to the same bytes.
        const QString csvPath = dir_.filePath("peak.csv");
        QString error;
        QVERIFY2(w->exportCsv(csvPath, &error), qPrintable(error));
        QFile csv(csvPath);
        QVERIFY(csv.open(QIODevice::ReadOnly));
        const QStringList lines = QString::fromUtf8(csv.readAll()).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(qint64(lines.size()), count + 1);
        qint64 csvBytes = 0;
        for (int i = 1; i < lines.size(); ++i) csvBytes += lines[i].section(',', 0, 0).toLongLong();
        QCOMPARE(csvBytes, bytes);

        // Hide PyTorch internals: the frames under torch/ and Python's own go, every byte stays
        // (train_gpt's outermost frame is its script, so the root's children were user frames
        // already; the internals sat between the script and the allocation).
        int internalBefore = 0, nodesBefore = 0;
        countFrames(tree.root, internalBefore, nodesBefore);
        QVERIFY(internalBefore > 0);
        w->hideInternals()->setChecked(true);
        QTRY_VERIFY_WITH_TIMEOUT(!window.stacksPage()->isComputing(), kTimeout);
        const views::StackTreeData& folded = w->treeModel()->treeData();
        QCOMPARE(folded.root.bytes[0], kPyTorchPeak);
        int internalAfter = 0, nodesAfter = 0;
        countFrames(folded.root, internalAfter, nodesAfter);
        QCOMPARE(internalAfter, 0);
        QVERIFY(nodesAfter < nodesBefore);
        for (const views::StackTreeNode& c : folded.root.children) QVERIFY(c.kind != views::StackTreeNode::Kind::InternalOnly);
        QVERIFY(QSettings().value("view/stacksHideInternals").toBool());  // remembered for the next window
        w->hideInternals()->setChecked(false);

        // A click on the largest tensor selects it in the segment map.
        window.stacksPage()->bringToFront(true);
        QTableView* table = w->table();
        QTRY_VERIFY(table->isVisible());
        const QModelIndex first = table->model()->index(0, views::LiveTensorsModel::SizeColumn);
        const quint64 address = first.data(views::LiveTensorsModel::AddressRole).toULongLong();
        QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, table->visualRect(first).center());
        QTRY_COMPARE_WITH_TIMEOUT(window.segmentMap()->selectedBlock().value_or(0), address, kTimeout);
    }

    void diffWithAnotherRunAtTheSameOp() {
        two_ = dir_.filePath("two.allocscope");
        importInto(two_, {"traces/train_gpt__default.pickle", "traces/train_gpt__expandable.pickle"});
        MainWindow window;
        window.show();
        openRun(window, two_, 1);
        window.showView("stacks");
        const qint64 peak = static_cast<qint64>(peakOf(two_, 1));
        window.goToEvent(peak);
        waitForStacks(window, -1);
        views::StacksChoice c;
        c.diff = views::StacksChoice::Diff::Run;
        c.otherRun = 2;
        window.stacksPage()->widget()->setChoice(c);
        QTRY_VERIFY_WITH_TIMEOUT(!window.stacksPage()->isComputing() && window.stacksPage()->result().tree.diff, kTimeout);

        // The op at the peak, and the last event of that op in each run.
        storage::SessionReader reader(two_.toStdString(), false);
        std::uint64_t chunkFirst = 0;
        const std::uint64_t op = reader.chunkAt(1, static_cast<std::uint64_t>(peak), chunkFirst)[static_cast<std::uint64_t>(peak) - chunkFirst].opIndex;
        const auto e1 = app::CompareRunLoader::lastEventAtOp(reader, 1, op);
        const auto e2 = app::CompareRunLoader::lastEventAtOp(reader, 2, op);
        QVERIFY(e1 && e2);
        const qint64 here = cliBlocks(two_, 1, QString("event:%1").arg(*e1)).second;
        const qint64 other = cliBlocks(two_, 2, QString("event:%1").arg(*e2)).second;
        const views::StackTreeData& tree = window.stacksPage()->widget()->treeModel()->treeData();
        QCOMPARE(tree.root.bytes[1], here);
        QCOMPARE(tree.root.bytes[0], other);
        QCOMPARE(tree.root.deltaBytes(), here - other);
        QCOMPARE(window.stacksPage()->widget()->treeModel()->columnCount(), int(views::StackTreeModel::NUM_DIFF_COLUMNS));
    }

    void traceWithoutFramesSaysWhy() {
        const QString rmm = dir_.filePath("rmm.allocscope");
        importInto(rmm, {"traces/frag101__default.csv"});
        MainWindow window;
        window.show();
        openRun(window, rmm);
        window.showView("stacks");
        waitForStacks(window, window.currentFrame().shown);
        views::StacksWidget* w = window.stacksPage()->widget();
        const views::StackTreeData& tree = w->treeModel()->treeData();
        QVERIFY(tree.root.bytes[0] > 0);
        QCOMPARE(tree.root.children.size(), std::size_t(1));
        QCOMPARE(tree.root.children[0].label, QString("no stack recorded"));
        const QModelIndex none = w->treeModel()->index(0, 0, w->treeModel()->index(0, 0));
        QVERIFY(none.data(Qt::ToolTipRole).toString().contains("RMM CSV log"));
        QVERIFY(w->tensorModel()->rowCount() > 0);
        for (int row = 0; row < w->tensorModel()->rowCount(); ++row) {
            const QModelIndex frame = w->tensorModel()->index(row, views::LiveTensorsModel::FrameColumn);
            QCOMPARE(frame.data().toString(), QString("no stack recorded"));
            QVERIFY(frame.data(Qt::ToolTipRole).toString().contains("no call stacks"));
        }
        // A session of one run: the diff with another run says there is none, and shows no tree.
        views::StacksChoice c;
        c.diff = views::StacksChoice::Diff::Run;
        w->setChoice(c);
        QVERIFY2(w->statusText().contains("No other run to compare with"), qPrintable(w->statusText()));
        QVERIFY(!w->treeModel()->treeData().valid);
    }
};

QTEST_MAIN(TestStacksTab)
#include "TestStacksTab.moc"
