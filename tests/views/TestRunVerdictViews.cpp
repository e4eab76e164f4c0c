// The run verdict and segment pools as the views show them: the run list's Verdict column (text,
// tooltip, CSV), the banner over the views (a warning for a diverged run, nothing for an exact
// one, never the word "exact" for a run that is not), the segment map's pool tags and tooltips,
// and the inspector's memory pool.
#include <QApplication>
#include <QtTest>

#include "views/data/RunVerdictText.h"
#include "views/widgets/BlockInspectorWidget.h"
#include "views/widgets/RunListModel.h"
#include "views/widgets/RunVerdictBanner.h"
#include "views/widgets/SegmentMapCanvas.h"

using namespace allocscope::views;

namespace {

RunListRow row(int number, RunVerdictKind kind, const QString& text, qint64 entry = -1, const QString& source = "snapshot: x.pickle") {
    RunListRow r;
    r.number = number;
    r.name = QStringLiteral("run %1").arg(number);
    r.source = source;
    r.status = QStringLiteral("complete");
    r.verdict = kind;
    r.verdictText = text;
    r.divergedEntry = entry;
    return r;
}

RunListData allKinds() {
    return {row(1, RunVerdictKind::Exact, "exact"),
            row(2, RunVerdictKind::Diverged, "diverged at trace entry 41: segment_alloc at 0x7f00 instead of 0x7e00", 41),
            row(3, RunVerdictKind::WhatIf, "what-if (not compared): the recording ran under another config"),
            row(4, RunVerdictKind::Simulated, "simulated (a workload run: no recording to compare with)", -1, "demo: fragmentation-101"),
            row(5, RunVerdictKind::Unknown, "")};
}

ViewSegment segment(quint64 address, quint64 size, const QString& pool) {
    ViewSegment s;
    s.address = address;
    s.totalSize = size;
    s.poolLabel = pool;
    ViewBlock b;
    b.address = address;
    b.size = size;
    s.blocks.push_back(b);
    return s;
}

}  // namespace

class TestRunVerdictViews : public QObject {
    Q_OBJECT

private slots:
    void verdictColumnAndTooltip() {
        RunListModel model;
        model.setRuns(allKinds());
        const auto cell = [&model](int r, int role = Qt::DisplayRole) {
            return model.data(model.index(r, RunListModel::VerdictColumn), role).toString();
        };
        QCOMPARE(model.headerData(RunListModel::VerdictColumn, Qt::Horizontal).toString(), QString("Verdict"));
        QCOMPARE(cell(0), QString("exact"));
        QCOMPARE(cell(1), QString("diverged at entry 41"));
        QCOMPARE(cell(2), QString("what-if (not compared)"));
        QCOMPARE(cell(3), QString("simulated"));
        QCOMPARE(cell(4), QString("unknown"));
        // The tooltip gives the whole verdict.
        QVERIFY(cell(1, Qt::ToolTipRole).startsWith("diverged at trace entry 41: segment_alloc at 0x7f00 instead of 0x7e00"));
        QVERIFY(cell(1, Qt::ToolTipRole).contains("not PyTorch's"));
        QVERIFY(cell(2, Qt::ToolTipRole).startsWith("what-if (not compared)"));
        QVERIFY(cell(4, Qt::ToolTipRole).contains("not known to match"));
        // Only the exact run says "exact", in any role.
        for (int r = 1; r < 5; ++r) {
            for (int role : {int(Qt::DisplayRole), int(Qt::ToolTipRole)}) {
                QVERIFY2(!cell(r, role).contains("exact"), qPrintable(cell(r, role)));
            }
        }
        // A diverged run stands out in the list.
        QVERIFY(model.data(model.index(1, RunListModel::VerdictColumn), Qt::ForegroundRole).isValid());
        QVERIFY(!model.data(model.index(0, RunListModel::VerdictColumn), Qt::ForegroundRole).isValid());
        // The CSV carries the full verdict.
        const QStringList lines = model.toCsv().split('\n', Qt::SkipEmptyParts);
        QVERIFY(lines[0].endsWith(",status,verdict"));
        QVERIFY2(lines[2].endsWith(",complete,diverged at trace entry 41: segment_alloc at 0x7f00 instead of 0x7e00"), qPrintable(lines[2]));
        QVERIFY(lines[5].endsWith(",complete,unknown"));
    }

    void bannerMarksRunsThatAreNotPyTorchs() {
        QWidget parent;
        RunVerdictBanner banner(&parent);
        const RunListData runs = allKinds();
        banner.showRun(runs, 2);
        QVERIFY(!banner.isHidden());
        QVERIFY(banner.isWarning());
        QCOMPARE(banner.text(), QString("Run 2 diverged from the recording at trace entry 41 — numbers are not PyTorch's."));
        QVERIFY(banner.toolTip().startsWith("diverged at trace entry 41: "));
        // The warning is drawn in its own colour, not the window's.
        parent.resize(600, 60);
        banner.resize(600, 40);
        const QImage image = banner.grab().toImage();
        QCOMPARE(image.pixelColor(image.width() - 6, image.height() / 2), QColor(0xff, 0xe0, 0x8a));

        banner.showRun(runs, 1);  // exact: nothing to warn about
        QVERIFY(banner.isHidden());
        QCOMPARE(banner.text(), QString());
        banner.showRun(runs, 4);  // a workload: simulated, no banner
        QVERIFY(banner.isHidden());
        banner.showRun(runs, 3);
        QVERIFY(!banner.isHidden() && !banner.isWarning());
        QVERIFY(banner.text().contains("what-if, not compared"));
        banner.showRun(runs, 5);  // an import with no stored verdict
        QVERIFY(!banner.isHidden());
        QVERIFY(banner.text().contains("does not say whether the replay matched"));
        QVERIFY(!banner.text().contains("exact"));
        banner.setRun(nullptr);
        QVERIFY(banner.isHidden());
    }

    void segmentMapLabelsPools() {
        SegmentMapCanvas canvas;
        canvas.resize(900, 300);
        SegmentMapData plain;
        plain.segments = {segment(0x7f0000000000, 2 << 20, QString()), segment(0x7f0000200000, 20 << 20, QString())};
        canvas.setData(plain);
        const int plainWidth = canvas.labelWidth();
        QVERIFY(!canvas.rowTags(0).contains("pool"));  // no private pool: rows unchanged
        QVERIFY(canvas.rowTags(0).contains("  s0"));
        plain.segments[1].stream = 566887184;  // a side stream: in hex, as the inspector names it
        canvas.setData(plain);
        QVERIFY(canvas.rowTags(1).contains("  s0x21ca0310"));
        QVERIFY(canvas.describeSegment(0).contains("Memory pool: default pool"));

        SegmentMapData pools = plain;
        pools.segments[1].poolLabel = QStringLiteral("graph pool (1,0)");
        canvas.setData(pools);
        QVERIFY(canvas.rowTags(1).endsWith("graph pool (1,0)"));
        QVERIFY(canvas.rowTags(0).endsWith("default pool"));
        QVERIFY(canvas.describeSegment(1).contains("Memory pool: graph pool (1,0)"));
        // The label column widens so the tag is drawn whole rather than elided.
        QVERIFY(canvas.labelWidth() > plainWidth);
        const QFontMetrics fm(canvas.font());
        QVERIFY(canvas.labelWidth() > fm.horizontalAdvance(QStringLiteral("0x7f0000200000  000.0 MiB  ") + canvas.rowTags(1)));
        const QRect bar = canvas.rowRect(1);
        QVERIFY(canvas.describeBlock(*canvas.blockAt(bar.center())).contains("memory pool: graph pool (1,0)"));
        canvas.setData(plain);
        QCOMPARE(canvas.labelWidth(), plainWidth);
    }

    void inspectorShowsTheMemoryPool() {
        BlockInspectorWidget w;
        BlockInspectorData data;
        data.valid = true;
        data.address = 0x7f0000200000;
        data.size = 1 << 20;
        data.pool = QStringLiteral("large");
        data.memoryPool = QStringLiteral("graph pool (1,0)");
        w.setData(data);
        QVERIFY2(w.plainText().contains("Memory pool") && w.plainText().contains("graph pool (1,0)"), qPrintable(w.plainText()));
    }
};

QTEST_MAIN(TestRunVerdictViews)
#include "TestRunVerdictViews.moc"
