// Several snapshots opened at once in the GUI (a folder of them): they land in one session (a refused file named in
// a message, the others imported), the Ranks tab lists them by rank with the outlier tinted and
// the median named, and a click opens that rank beside the median rank in Compare. Also the
// folder listing behind File ▸ Open Folder… (natural order, traces only).
#include <QtTest>

#include <QFile>
#include <QLabel>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QTableView>

#include "MessageBoxCatcher.h"
#include "app/gui/ComparePage.h"
#include "app/gui/MainWindow.h"
#include "app/gui/MultiImport.h"
#include "views/widgets/RanksTableModel.h"
#include "views/widgets/RanksWidget.h"
#include "views/widgets/RunListModel.h"
#include "views/widgets/RunListWidget.h"

using allocscope::app::MainWindow;
using allocscope::app::MultiImport;
using testing::MessageBoxCatcher;
namespace views = allocscope::views;

namespace {
constexpr int kTimeout = 60000;

QString replayTrace(const QString& name) {
    return QString::fromLocal8Bit(qgetenv("ALLOCSCOPE_TEST_DATA")) + "/replay/" + name + ".pickle";
}

// The proxy row showing `run` in the Ranks table, or -1.
int rowOfRun(const views::RanksWidget& ranks, int run) {
    QAbstractItemModel* model = ranks.view()->model();
    for (int r = 0; r < model->rowCount(); ++r) {
        if (model->index(r, 0).data(views::RanksTableModel::RunNumberRole).toInt() == run) return r;
    }
    return -1;
}
}  // namespace

class TestMainWindowRanks : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

    QString copy(const QString& source, const QString& name) {
        const QString to = dir_.filePath(name);
        if (!QFile::copy(replayTrace(source), to)) qFatal("cannot copy the test trace");
        return to;
    }

private slots:
    void initTestCase() {
        QCoreApplication::setOrganizationName("AllocScopeTest");
        QCoreApplication::setApplicationName("TestMainWindowRanks");
        QSettings().clear();
        QVERIFY(dir_.isValid());
    }

    void folderListingIsNatural() {
        QTemporaryDir folder;
        for (const char* name : {"rank10.pickle", "rank2.pickle", "rank1.json", "log.csv", "notes.txt"}) {
            QFile f(folder.filePath(name));
            QVERIFY(f.open(QIODevice::WriteOnly));
        }
        QVERIFY(QDir(folder.path()).mkdir("sub.pickle"));  // a folder is not a trace
        QStringList names;
        for (const QString& path : MultiImport::tracesInFolder(folder.path())) names << QFileInfo(path).fileName();
        QCOMPARE(names, QStringList({"log.csv", "rank1.json", "rank2.pickle", "rank10.pickle"}));
    }

    void openSeveralThenRanks() {
        MainWindow window;
        window.resize(1100, 700);
        window.show();
        // A folder, as File ▸ Open Folder… and a dropped folder give it: its files in natural order.
        QVERIFY(QDir(dir_.path()).mkdir("job"));
        const QString bad = dir_.filePath("job/rank4.pickle");
        {
            QFile f(bad);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("junk");
        }
        MessageBoxCatcher boxes;
        QSignalSpy finished(&window, &MainWindow::jobFinished);
        copy("repeated_empty_cache", "job/rank0.pickle");
        copy("repeated_empty_cache", "job/rank1.pickle");
        copy("roundup_list", "job/rank2.pickle");
        copy("streams_record_stream", "job/rank3.pickle");
        window.openFiles({dir_.filePath("job")});
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, kTimeout);
        QTRY_COMPARE_WITH_TIMEOUT(boxes.texts.size(), 1, kTimeout);
        QVERIFY2(boxes.texts.front().contains("rank4.pickle") && boxes.texts.front().contains("1 of 5"), qPrintable(boxes.texts.front()));
        QTRY_COMPARE_WITH_TIMEOUT(window.runList()->model()->rowCount(), 4, kTimeout);

        views::RanksWidget* ranks = window.ranksView();
        QTRY_COMPARE_WITH_TIMEOUT(ranks->model()->rowCount(), 4, kTimeout);
        // The session file changes while the files are imported, and each change re-reads the ranks: a
        // read taken while the last run was still being written shows it without a rank (a run's rank
        // is written when it finishes). Wait for the read after the import, which has every rank.
        QTRY_COMPARE_WITH_TIMEOUT(ranks->view()->model()->index(3, views::RanksTableModel::RankColumn).data().toString(), QString("3"), kTimeout);
        // Run numbers follow the files' order; the rows, the ranks.
        for (int rank = 0; rank < 4; ++rank) {
            QCOMPARE(ranks->view()->model()->index(rank, views::RanksTableModel::RankColumn).data().toString(), QString::number(rank));
            QCOMPARE(ranks->view()->model()->index(rank, views::RanksTableModel::RunColumn).data().toInt(), rank + 1);
        }
        // roundup_list peaks at 2350 MiB against the median's 32 MiB: the one outlier.
        const views::RanksData& data = ranks->data();
        QCOMPARE(data.medianRun, 1);
        for (const views::RankRowData& row : data.rows) QCOMPARE(row.outlier(), row.rank == 2);
        const QModelIndex outlier = ranks->view()->model()->index(rowOfRun(*ranks, 3), views::RanksTableModel::PeakReservedColumn);
        QVERIFY(outlier.data(Qt::BackgroundRole).value<QColor>().isValid());
        QVERIFY(outlier.data(Qt::ToolTipRole).toString().contains("above the median"));
        QVERIFY(ranks->summaryLabel()->text().contains("1 outlier"));
        // The threshold control reaches the overview.
        ranks->setThreshold(2.0);
        QCOMPARE(ranks->data().threshold, 2.0);

        // A click on rank 2 opens run 3 beside the median rank (run 1) in Compare.
        window.viewTabs()->setCurrentWidget(ranks);
        const QRect rect = ranks->view()->visualRect(ranks->view()->model()->index(rowOfRun(*ranks, 3), views::RanksTableModel::NameColumn));
        QTest::mouseClick(ranks->view()->viewport(), Qt::LeftButton, {}, rect.center());
        QTRY_COMPARE_WITH_TIMEOUT(window.viewTabs()->currentWidget(), static_cast<QWidget*>(window.comparePage()), kTimeout);
        QTRY_COMPARE_WITH_TIMEOUT(window.comparePage()->shownRuns(), QList<int>({3, 1}), kTimeout);
    }
};

QTEST_MAIN(TestMainWindowRanks)
#include "TestMainWindowRanks.moc"
