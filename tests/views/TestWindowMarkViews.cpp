// The Compare tab and the what-if answer on runs that replay a ring-buffer window (issue 36):
// every figure that covers only the window is marked "(window)" (table headers, chart titles, the
// answer's sentences) and its tooltip carries the note that says why it cannot be compared with a
// whole run's figure; runs of a whole history show no mark.
#include <QtTest>

#include "views/charts/CompareBarChart.h"
#include "views/widgets/CompareTableModel.h"
#include "views/widgets/CompareWidget.h"
#include "views/widgets/SummaryTableModel.h"
#include "views/widgets/WhatIfAnswerView.h"

using namespace allocscope::views;

namespace {
constexpr quint64 kGiB = 1024ull * 1024 * 1024;
const QString kNote = QStringLiteral(
    "window: figures marked (window) cover only the last 3000 of the run's trace entries");

std::vector<CompareRun> runs(bool window) {
    CompareRun a;
    a.label = QStringLiteral("default");
    a.run = 1;
    a.peakReserved = 4 * kGiB;
    a.cudaMallocs = 12;
    a.windowOnly = window;
    CompareRun b = a;
    b.label = QStringLiteral("expandable_segments:True");
    b.configText = b.label;
    b.run = 2;
    b.peakReserved = 3 * kGiB;
    return {a, b};
}

WhatIfAnswer answer(bool window) {
    WhatIfAnswerLine l;
    l.label = QStringLiteral("expandable_segments:True");
    l.against = QStringLiteral("the recording, run 1");
    l.counts = {3 * kGiB, 0, -1, 0, 5};
    l.baseline = {4 * kGiB, 1, 812, 2, 12};
    l.smallestGpu = QStringLiteral("24gb");
    WhatIfAnswer a;
    a.conditions = QStringLiteral("replayed on h100-80gb");
    a.lines = {l};
    if (window) a.windowNote = kNote;
    return a;
}
}  // namespace

class TestWindowMarkViews : public QObject {
    Q_OBJECT

private slots:
    void tableHeadersMarkWindowOnlyColumns() {
        CompareTableModel m;
        m.setRuns(runs(true), kNote);
        for (int c = 0; c < CompareTableModel::NUM_COLUMNS; ++c) {
            const QString header = m.headerData(c, Qt::Horizontal).toString();
            const QString tip = m.headerData(c, Qt::Horizontal, Qt::ToolTipRole).toString();
            const bool figure =
                c != CompareTableModel::ConfigColumn && c != CompareTableModel::RunColumn;
            QCOMPARE(header.endsWith(QStringLiteral(" (window)")), figure);
            QCOMPARE(tip.contains(kNote), figure);
            const QString cellTip = m.data(m.index(0, c), Qt::ToolTipRole).toString();
            QCOMPARE(cellTip.contains(kNote), figure);
        }
        QCOMPARE(m.headerData(CompareTableModel::PeakReservedColumn, Qt::Horizontal).toString(),
                 QStringLiteral("Peak reserved (window)"));
        // The shown numbers stay numbers (sorting and copying them still work).
        QCOMPARE(m.data(m.index(0, CompareTableModel::CudaMallocColumn)).toString(),
                 QStringLiteral("12"));
        // The export says it too, per run.
        const QStringList csv = m.toCsv().split(QLatin1Char('\n'));
        QVERIFY(csv.at(0).endsWith(QStringLiteral(",window_only")));
        QVERIFY(csv.at(1).endsWith(QStringLiteral(",1")));
        m.setRuns(runs(false));
        QVERIFY(m.toCsv().split(QLatin1Char('\n')).at(1).endsWith(QStringLiteral(",0")));
    }

    void wholeHistoryTableHasNoMarks() {
        CompareTableModel m;
        m.setRuns(runs(false));
        for (int c = 0; c < CompareTableModel::NUM_COLUMNS; ++c) {
            QVERIFY(!m.headerData(c, Qt::Horizontal).toString().contains(QStringLiteral("window")));
            QVERIFY(!m.data(m.index(0, c), Qt::ToolTipRole)
                         .toString()
                         .contains(QStringLiteral("window")));
        }
    }

    void widgetMarksChartsAndShowsTheNote() {
        CompareWidget w;
        CompareData data;
        data.program = QStringLiteral("ringbuf_train__default.pickle on h100-80gb");
        data.opCount = 3300;
        data.runs = runs(true);
        data.windowNote = kNote;
        w.setData(data);
        CompareBarChart* peak = w.barChart(CompareMetric::PeakReserved);
        QCOMPARE(peak->title(), QStringLiteral("peak reserved (window)"));
        QVERIFY(peak->toolTip().contains(kNote));
        QVERIFY(w.tableModel()
                    ->headerData(CompareTableModel::RetriesColumn, Qt::Horizontal)
                    .toString()
                    .endsWith(" (window)"));
        data.runs = runs(false);
        data.windowNote.clear();
        w.setData(data);
        QCOMPARE(peak->title(), QStringLiteral("peak reserved"));
        QVERIFY(!peak->toolTip().contains(QStringLiteral("window")));
    }

    void answerMarksEveryWindowFigure() {
        WhatIfAnswerView view;
        view.setAnswer(answer(true));
        const QString text = view.plainText();
        qInfo("%s", qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("the OOM at op 812 does not happen (window)")),
                 qPrintable(text));
        QVERIFY(text.contains(QStringLiteral("retries 2 → 0 (window)")));
        QVERIFY(text.contains(QStringLiteral("cudaMalloc calls 12 → 5 (window)")));
        QVERIFY(text.contains(QStringLiteral("smallest GPU preset without an OOM: 24gb (window)")));
        QVERIFY(QRegularExpression(QStringLiteral("peak reserved [^;]+ → [^;]+ \\(window\\)"))
                    .match(text)
                    .hasMatch());
        QVERIFY(text.endsWith(kNote));
        QVERIFY(view.toolTipText().contains(kNote));
        // A window that OOMs on every preset tells that of the whole run too: not marked.
        WhatIfAnswer none = answer(true);
        none.lines.front().smallestGpu = QString();
        QVERIFY(WhatIfAnswerView::sentence(none.lines.front(), true)
                    .endsWith(QStringLiteral("no GPU preset runs it without an OOM")));
    }

    // The memory summary at an event of such a run: peaks, totals and counters are the window's.
    void summaryMarksPeaksTotalsAndCounters() {
        SummaryTableModel m;
        const std::vector<SummaryRow> rows = {
            SummaryRow{QStringLiteral("GPU reserved memory"), true, 1000, 2000, 3000, 2000},
            SummaryRow{QStringLiteral("cudaMalloc calls"), false, 68, 68, 0, 0, true}};
        m.resetData(rows, kNote);
        QCOMPARE(m.headerData(SummaryTableModel::PeakColumn, Qt::Horizontal).toString(),
                 QStringLiteral("Peak (window)"));
        QCOMPARE(m.headerData(SummaryTableModel::AllocatedColumn, Qt::Horizontal).toString(),
                 QStringLiteral("Tot. alloc (window)"));
        QCOMPARE(m.headerData(SummaryTableModel::CurrentColumn, Qt::Horizontal).toString(),
                 QStringLiteral("Current"));
        QVERIFY(m.headerData(SummaryTableModel::PeakColumn, Qt::Horizontal, Qt::ToolTipRole)
                    .toString()
                    .contains(kNote));
        const auto tip = [&m](int row, int column) {
            return m.data(m.index(row, column), Qt::ToolTipRole).toString();
        };
        QVERIFY(!tip(0, SummaryTableModel::CurrentColumn)
                     .contains(kNote));  // reserved now: the whole run's
        QVERIFY(tip(0, SummaryTableModel::PeakColumn).contains(kNote));
        QVERIFY(tip(1, SummaryTableModel::CurrentColumn)
                    .contains(kNote));  // a counter counts the window
        m.resetData(rows);
        QCOMPARE(m.headerData(SummaryTableModel::PeakColumn, Qt::Horizontal).toString(),
                 QStringLiteral("Peak"));
        QVERIFY(!tip(1, SummaryTableModel::CurrentColumn).contains(QStringLiteral("window")));
    }

    void wholeHistoryAnswerHasNoMarks() {
        WhatIfAnswerView view;
        view.setAnswer(answer(false));
        QVERIFY2(!view.plainText().contains(QStringLiteral("window")),
                 qPrintable(view.plainText()));
        QVERIFY(!view.toolTipText().contains(QStringLiteral("window")));
    }
};

QTEST_MAIN(TestWindowMarkViews)
#include "TestWindowMarkViews.moc"
