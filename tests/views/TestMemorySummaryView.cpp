#include <QAbstractItemModelTester>
#include <QPlainTextEdit>
#include <QTableView>
#include <QtTest>

#include "ViewTestData.h"
#include "views/widgets/MemorySummaryView.h"
#include "views/widgets/SummaryTableModel.h"

using namespace allocscope::views;

class TestMemorySummaryView : public QObject {
    Q_OBJECT
private slots:
    void tableIsTheDefaultAndFormatsUnits() {
        MemorySummaryView view;
        QAbstractItemModelTester tester(view.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        view.setData(viewtest::realisticSummary());
        QVERIFY(!view.isTextShown());
        SummaryTableModel* m = view.model();
        QCOMPARE(m->rowCount(), 11);
        QCOMPARE(m->columnCount(), int(SummaryTableModel::NUM_COLUMNS));
        QCOMPARE(m->index(0, SummaryTableModel::MetricColumn).data().toString(), QStringLiteral("Allocated memory"));
        QCOMPARE(m->index(0, SummaryTableModel::CurrentColumn).data().toString(), QStringLiteral("3.00 GiB"));
        QCOMPARE(m->index(0, SummaryTableModel::PeakColumn).data().toString(), QStringLiteral("6.00 GiB"));
        QCOMPARE(m->index(0, SummaryTableModel::PeakColumn).data(SummaryTableModel::SortRole).toLongLong(), 6'442'450'944);
        QCOMPARE(m->index(5, SummaryTableModel::AllocatedColumn).data().toString(), QStringLiteral("987,654"));  // a count
        QCOMPARE(m->headerData(SummaryTableModel::PeakColumn, Qt::Horizontal).toString(), QStringLiteral("Peak"));
        view.setData({});
        QCOMPARE(m->rowCount(), 0);
    }

    void textIsMonospaceAndVerbatim() {
        MemorySummaryView view;
        const SummaryTableData data = viewtest::realisticSummary();
        view.setData(data);
        view.showText();
        QVERIFY(view.isTextShown());
        QCOMPARE(view.textView()->toPlainText(), data.text);
        QVERIFY(QFontInfo(view.textView()->font()).fixedPitch());
        QVERIFY(view.textView()->isReadOnly());
    }
};

QTEST_MAIN(TestMemorySummaryView)
#include "TestMemorySummaryView.moc"
