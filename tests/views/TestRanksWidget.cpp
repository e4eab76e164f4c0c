// The Ranks tab's widget on its own: rows sort by the numbers (not their text), runs without a
// rank sort last, only outliers are tinted and say why, the threshold control reports a share,
// and a click asks for that run.
#include <QtTest>

#include <QDoubleSpinBox>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QTableView>

#include "views/widgets/RanksTableModel.h"
#include "views/widgets/RanksWidget.h"

namespace views = allocscope::views;

namespace {

views::RankRowData row(int run, int rank, qint64 reservedMiB, double above, bool reservedOutlier, qint64 ooms) {
    views::RankRowData r;
    r.run.number = run;
    r.run.name = QStringLiteral("rank%1.pickle").arg(rank);
    r.rank = rank;
    r.complete = true;
    r.peakReserved = reservedMiB << 20;
    r.peakAllocated = (reservedMiB / 2) << 20;
    r.fragmentationAtPeak = 0.5;
    r.ooms = ooms;
    r.oomOutlier = ooms > 0;
    r.aboveMedian = above;
    r.reservedOutlier = reservedOutlier;
    return r;
}

QList<int> runsInViewOrder(const views::RanksWidget& w) {
    QList<int> runs;
    for (int r = 0; r < w.view()->model()->rowCount(); ++r) {
        runs << w.view()->model()->index(r, 0).data(views::RanksTableModel::RunNumberRole).toInt();
    }
    return runs;
}

}  // namespace

class TestRanksWidget : public QObject {
    Q_OBJECT
private slots:
    void sortsTintsAndClicks() {
        views::RanksData data;
        data.rows.push_back(row(1, 1, 900, 0.0, false, 0));   // 900 MiB: the median
        data.rows.push_back(row(2, 0, 1200, 0.333, true, 0));  // 1.17 GiB: sorts above 900 MiB by bytes
        views::RankRowData unranked = row(3, 2, 100, -0.89, false, 1);
        unranked.rank = -1;
        data.rows.push_back(unranked);
        data.medianRun = 1;
        data.medianPeakReserved = qint64{900} << 20;
        views::RanksWidget w;
        w.resize(900, 300);
        w.show();
        w.setData(data);

        QCOMPARE(runsInViewOrder(w), QList<int>({2, 1, 3}));  // by rank, none last
        w.view()->sortByColumn(views::RanksTableModel::PeakReservedColumn, Qt::DescendingOrder);
        QCOMPARE(runsInViewOrder(w), QList<int>({2, 1, 3}));
        w.view()->sortByColumn(views::RanksTableModel::PeakReservedColumn, Qt::AscendingOrder);
        QCOMPARE(runsInViewOrder(w), QList<int>({3, 1, 2}));

        const QAbstractItemModel* model = w.view()->model();
        for (int r = 0; r < model->rowCount(); ++r) {
            const QModelIndex index = model->index(r, views::RanksTableModel::NameColumn);
            const int run = index.data(views::RanksTableModel::RunNumberRole).toInt();
            QCOMPARE(index.data(Qt::BackgroundRole).isValid(), run != 1);
            QCOMPARE(index.data(Qt::ToolTipRole).toString().contains("Outlier"), run != 1);
        }
        QCOMPARE(model->index(1, views::RanksTableModel::AboveMedianColumn).data().toString(), QString("median"));
        QVERIFY(w.summaryLabel()->text().contains("2 outliers"));

        QSignalSpy threshold(&w, &views::RanksWidget::thresholdChanged);
        w.thresholdBox()->setValue(25.0);
        QCOMPARE(threshold.size(), 1);
        QCOMPARE(threshold.front().front().toDouble(), 0.25);

        QSignalSpy activated(&w, &views::RanksWidget::runActivated);
        const QRect rect = w.view()->visualRect(model->index(2, views::RanksTableModel::NameColumn));
        QTest::mouseClick(w.view()->viewport(), Qt::LeftButton, {}, rect.center());
        QCOMPARE(activated.size(), 1);
        QCOMPARE(activated.front().front().toInt(), 2);
    }
};

QTEST_MAIN(TestRanksWidget)
#include "TestRanksWidget.moc"
