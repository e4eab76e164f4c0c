// The Compare tab end to end: ComparePage runs fragmentation-101 under several configs into a
// temporary session through its background job, and the numbers it shows are PyTorch's (the
// workload reproduces the shared frag101 traces exactly) and the comparison engine's.
#include <QApplication>
#include <QFile>
#include <QLabel>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>

#include <map>
#include <memory>
#include <string>

#include "allocator/compare/ComparisonEngine.h"
#include "allocator/config/ConfigParser.h"
#include "allocator/device/GpuPresets.h"
#include "allocator/workloads/WorkloadRegistry.h"
#include "app/gui/ComparePage.h"
#include "app/gui/CompareRequest.h"
#include "storage/session/SessionReader.h"
#include "storage/session/SessionWriter.h"
#include "views/charts/CompareBarChart.h"
#include "views/charts/CompareTimelineChart.h"
#include "views/theme/ThemePalette.h"
#include "views/widgets/CompareTableModel.h"
#include "views/widgets/CompareWidget.h"
#include "views/widgets/SegmentMapWidget.h"

using namespace allocscope;

namespace {
constexpr quint64 kMiB = 1024ull * 1024ull;
constexpr int kTimeoutMs = 120000;  // generous: sanitizer builds on a loaded 2-core machine

app::CompareRequest frag101(const QList<QPair<QString, QString>>& configs) {
    app::CompareRequest request;
    request.workload = QStringLiteral("fragmentation-101");
    request.configs = configs;
    return request;
}

quint64 tableRaw(views::CompareWidget* w, int row, int column) {
    views::CompareTableModel* m = w->tableModel();
    return m->data(m->index(row, column), views::CompareTableModel::SortRole).toULongLong();
}

// The same program through the comparison engine, for the numbers the session does not store.
alloc::RunMetrics engineRun(const std::string& config) {
    const alloc::Workload& workload = alloc::WorkloadRegistry::instance().get("fragmentation-101");
    const alloc::GeneratedProgram generated = workload.generate(workload.resolve(), 1);
    const alloc::GpuPreset preset = *alloc::findGpuPreset(workload.defaultGpu());
    alloc::CompareDevice device;
    device.name = preset.name;
    device.totalMemory = preset.totalMemory;
    device.otherMemory = preset.contextMemory;
    return alloc::ComparisonEngine::runOne(generated.program, {config, alloc::parseConfig(config).config}, device);
}
}  // namespace

class TestComparePage : public QObject {
    Q_OBJECT
private slots:
    void init() {
        dir_ = std::make_unique<QTemporaryDir>();
        QVERIFY(dir_->isValid());
        path_ = dir_->filePath(QStringLiteral("compare.allocscope"));
    }
    void cleanup() {
        views::applyTheme(*qApp, views::ThemeChoice::Light);
        dir_.reset();
    }

    void comparesTwoConfigsLikePyTorch() {
        storage::SessionWriter writer(path_.toStdString());
        app::ComparePage page;
        page.resize(1280, 720);
        page.setSession(path_, &writer);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        QSignalSpy recorded(&page, &app::ComparePage::runsRecorded);
        QSignalSpy busy(&page, &app::ComparePage::busyChanged);
        page.startCompare(frag101({{QStringLiteral("default"), QString()},
                                   {QStringLiteral("expandable"), QStringLiteral("expandable_segments:True")}}));
        QVERIFY(page.isBusy());
        QTRY_COMPARE_WITH_TIMEOUT(recorded.count(), 1, kTimeoutMs);
        QVERIFY(!page.isBusy());
        QCOMPARE(busy.count(), 2);
        const QList<int> runs = recorded.at(0).at(0).value<QList<int>>();
        QCOMPARE(runs, (QList<int>{1, 2}));
        QCOMPARE(page.lastMessage(), QStringLiteral("Compared 2 configs: 2 runs recorded in the session (runs 1, 2)."));

        // Two complete runs in the session, named after their configs. The configs run in
        // parallel, so which one the session numbered first is not fixed: remember the names.
        writer.flush();
        std::map<int, std::string> nameOfRun;
        {
            storage::SessionReader reader(path_.toStdString());
            const std::vector<storage::RunRow> rows = reader.runs();
            QCOMPARE(rows.size(), std::size_t(2));
            for (const storage::RunRow& row : rows) {
                QCOMPARE(int(row.status), int(storage::RunStatus::Complete));
                nameOfRun[row.number] = row.info.name;
            }
        }

        // The table: in config order, PyTorch's peaks (frag101: 1194 MiB default, 1162 MiB expandable).
        views::CompareWidget* w = page.compareWidget();
        QCOMPARE(w->tableModel()->rowCount(), 2);
        QCOMPARE(w->tableModel()->data(w->tableModel()->index(0, 0)).toString(), QStringLiteral("default"));
        QCOMPARE(w->tableModel()->data(w->tableModel()->index(1, 0)).toString(), QStringLiteral("expandable"));
        QCOMPARE(tableRaw(w, 0, views::CompareTableModel::PeakReservedColumn), 1194 * kMiB);
        QCOMPARE(tableRaw(w, 1, views::CompareTableModel::PeakReservedColumn), 1162 * kMiB);
        // The rows show, in config order, the session's run of each config.
        const QList<int> shown = page.shownRuns();
        QCOMPARE(shown.size(), 2);
        QCOMPARE(nameOfRun[shown[0]], std::string("default"));
        QCOMPARE(nameOfRun[shown[1]], std::string("expandable"));

        // The numbers read back from the session equal the comparison engine's own measurement.
        const std::string configs[2] = {"", "expandable_segments:True"};
        for (int row = 0; row < 2; ++row) {
            const alloc::RunMetrics m = engineRun(configs[row]);
            QCOMPARE(tableRaw(w, row, views::CompareTableModel::PeakAllocatedColumn), quint64(m.peakAllocated));
            QCOMPARE(tableRaw(w, row, views::CompareTableModel::CudaMallocColumn), quint64(m.cudaMallocs));
            QCOMPARE(tableRaw(w, row, views::CompareTableModel::CudaFreeColumn), quint64(m.cudaFrees));
            QCOMPARE(tableRaw(w, row, views::CompareTableModel::RetriesColumn), quint64(m.retries));
            QCOMPARE(tableRaw(w, row, views::CompareTableModel::OomsColumn), quint64(m.ooms.size()));
            QVERIFY(m.atPeak.has_value());
            QCOMPARE(tableRaw(w, row, views::CompareTableModel::WasteColumn), quint64(m.atPeak->roundingLoss + m.atPeak->strandedFree));
            const double us = w->tableModel()->data(w->tableModel()->index(row, views::CompareTableModel::AllocatorTimeColumn),
                                                    views::CompareTableModel::SortRole).toDouble();
            QVERIFY2(std::abs(us - m.allocatorUs) < 1e-6, qPrintable(QStringLiteral("%1 vs %2").arg(us).arg(m.allocatorUs)));
        }
        // Bars and timelines carry the same runs.
        QCOMPARE(w->barChart(views::CompareMetric::PeakReserved)->barCount(), 2);
        QCOMPARE(w->barChart(views::CompareMetric::PeakReserved)->barValue(0), 1194.0);
        QCOMPARE(w->barChart(views::CompareMetric::PeakReserved)->barValue(1), 1162.0);
        QCOMPARE(w->timelineChart()->lineCount(), 2);
        double top = 0;
        for (const QPointF& p : w->timelineChart()->linePoints(0)) top = std::max(top, p.y());
        QCOMPARE(top, 1194.0);

        // Side-by-side maps at one op: each run's layout there (reserved = its timeline's value).
        w->tabs()->setCurrentIndex(2);
        const int before = page.mapsLoaded();
        page.setCurrentOp(150);
        QTRY_VERIFY_WITH_TIMEOUT(page.mapsLoaded() > before && w->segmentMap(0)->isVisible(), kTimeoutMs);
        QTRY_VERIFY_WITH_TIMEOUT(w->segmentMap(1)->isVisible(), kTimeoutMs);
        for (int i = 0; i < 2; ++i) {
            quint64 mapped = 0;
            for (const views::ViewSegment& s : w->segmentMap(i)->data().segments)
                for (const views::ViewBlock& b : s.blocks)
                    if (b.state != views::BlockState::Unmapped) mapped += b.size;
            qint64 expected = 0;
            for (const views::CompareTimelinePoint& p : w->data().runs[static_cast<std::size_t>(i)].reservedTimeline)
                if (p.op <= 150) expected = p.reserved;
            QVERIFY(mapped > 0);
            QCOMPARE(qint64(mapped), expected);
        }
        if (qEnvironmentVariableIsSet("ALLOCSCOPE_SCREENSHOT_DIR")) {
            const QString out = qEnvironmentVariable("ALLOCSCOPE_SCREENSHOT_DIR");
            page.grab().save(out + QStringLiteral("/compare-maps.png"));
            w->tabs()->setCurrentIndex(0);
            QCoreApplication::processEvents();
            page.grab().save(out + QStringLiteral("/compare-charts.png"));
            w->tabs()->setCurrentIndex(1);
            QCoreApplication::processEvents();
            page.grab().save(out + QStringLiteral("/compare-table.png"));
            views::applyTheme(*qApp, views::ThemeChoice::Dark);
            QCoreApplication::processEvents();
            w->tabs()->setCurrentIndex(0);
            QCoreApplication::processEvents();
            page.grab().save(out + QStringLiteral("/compare-charts-dark.png"));
        }

        // Export: the table as CSV with the raw numbers.
        const QString csv = dir_->filePath(QStringLiteral("compare.csv"));
        QString error;
        QVERIFY2(page.exportTableCsv(csv, &error), qPrintable(error));
        QFile file(csv);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = file.readAll().trimmed().split('\n');
        QCOMPARE(lines.size(), 3);
        QVERIFY(lines[1].startsWith("default,," + QByteArray::number(1194 * kMiB) + ","));
        QVERIFY(page.exportChartsPng(dir_->filePath(QStringLiteral("compare.png")), &error));

        // The runs, shown again from the session by a page on a read-only session.
        app::ComparePage viewer;
        viewer.setSession(path_, nullptr);
        viewer.showRuns({shown[1], shown[0]});  // expandable's run, then default's
        QTRY_COMPARE_WITH_TIMEOUT(viewer.compareWidget()->tableModel()->rowCount(), 2, kTimeoutMs);
        QCOMPARE(tableRaw(viewer.compareWidget(), 0, views::CompareTableModel::PeakReservedColumn), 1162 * kMiB);
        QCOMPARE(tableRaw(viewer.compareWidget(), 1, views::CompareTableModel::PeakReservedColumn), 1194 * kMiB);
        QCOMPARE(tableRaw(viewer.compareWidget(), 1, views::CompareTableModel::WasteColumn),
                 tableRaw(w, 0, views::CompareTableModel::WasteColumn));
        QCOMPARE(viewer.lastMessage(), QStringLiteral("Comparing runs %1, %2 of one program.").arg(shown[1]).arg(shown[0]));
        QVERIFY(viewer.compareWidget()->data().program.startsWith(QStringLiteral("fragmentation-101")));
    }

    void asyncBackendIsMeasuredNotRecorded() {
        storage::SessionWriter writer(path_.toStdString());
        app::ComparePage page;
        page.resize(1280, 720);
        page.setSession(path_, &writer);
        QSignalSpy recorded(&page, &app::ComparePage::runsRecorded);
        page.startCompare(frag101({{QStringLiteral("default"), QString()},
                                   {QStringLiteral("async"), QStringLiteral("backend:cudaMallocAsync")}}));
        QTRY_VERIFY_WITH_TIMEOUT(!page.isBusy(), kTimeoutMs);
        QCOMPARE(recorded.count(), 1);
        QCOMPARE(recorded.at(0).at(0).value<QList<int>>(), QList<int>{1});
        views::CompareWidget* w = page.compareWidget();
        QCOMPARE(w->tableModel()->rowCount(), 2);
        QCOMPARE(page.shownRuns(), (QList<int>{1, -1}));
        QCOMPARE(tableRaw(w, 1, views::CompareTableModel::PeakReservedColumn), 1152 * kMiB);  // the async model's
        QVERIFY(w->data().runs[1].asyncBackend);
        // Its map is replaced by a note that says why.
        w->tabs()->setCurrentIndex(2);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        QTRY_VERIFY_WITH_TIMEOUT(w->segmentMap(0)->isVisible(), kTimeoutMs);
        QVERIFY(!w->segmentMap(1)->isVisible());
        QVERIFY(w->mapNote(1)->isVisible());
        QVERIFY(w->mapNote(1)->text().contains(QStringLiteral("has no segment map")));
    }

    void comparesATraceReplayedAsTheProgram() {
        const QString trace = QStringLiteral(ALLOCSCOPE_TEST_DATA "/traces/frag101__default.pickle");
        QFile input(trace);
        QVERIFY(input.open(QIODevice::ReadOnly));
        const QByteArray before = input.readAll();
        input.close();
        storage::SessionWriter writer(path_.toStdString());
        app::ComparePage page;
        page.setSession(path_, &writer);
        QSignalSpy recorded(&page, &app::ComparePage::runsRecorded);
        app::CompareRequest request;
        request.tracePath = trace;
        request.configs = {{QStringLiteral("default"), QString()}, {QStringLiteral("expandable"), QStringLiteral("expandable_segments:True")}};
        page.startCompare(request);
        QTRY_COMPARE_WITH_TIMEOUT(recorded.count(), 1, kTimeoutMs);
        views::CompareWidget* w = page.compareWidget();
        QCOMPARE(w->data().opCount, qint64(305));  // the ops the replay of the recording applied
        QCOMPARE(tableRaw(w, 0, views::CompareTableModel::PeakReservedColumn), 1194 * kMiB);
        QCOMPARE(tableRaw(w, 1, views::CompareTableModel::PeakReservedColumn), 1162 * kMiB);
        QCOMPARE(tableRaw(w, 0, views::CompareTableModel::CudaMallocColumn), quint64(53));
        writer.flush();
        storage::SessionReader reader(path_.toStdString());
        QCOMPARE(reader.run(1).info.sourceKind, std::string("snapshot"));
        QVERIFY(input.open(QIODevice::ReadOnly));
        QCOMPARE(input.readAll(), before);  // input files are never written
    }

    void cancelStopsTheComparison() {
        storage::SessionWriter writer(path_.toStdString());
        app::ComparePage page;
        page.setSession(path_, &writer);
        QList<QPair<QString, QString>> configs;
        for (int mb = 100; mb < 130; ++mb) {  // 30 runs x 317 ops
            const QString text = QStringLiteral("max_split_size_mb:%1").arg(mb);
            configs.append({text, text});
        }
        page.startCompare(frag101(configs));
        QVERIFY(page.isBusy());
        page.cancel();
        QTRY_VERIFY_WITH_TIMEOUT(!page.isBusy(), kTimeoutMs);
        QVERIFY2(page.lastMessage().contains(QStringLiteral("cancelled")), qPrintable(page.lastMessage()));
        QVERIFY(page.compareWidget()->tableModel()->rowCount() < 30);
        writer.flush();
        {
            storage::SessionReader reader(path_.toStdString());
            const std::vector<storage::RunRow> rows = reader.runs();
            QVERIFY(rows.size() < 30);
            for (const storage::RunRow& row : rows) QVERIFY(row.status != storage::RunStatus::Recording);
        }
        // The page is usable again.
        QSignalSpy recorded(&page, &app::ComparePage::runsRecorded);
        page.startCompare(frag101({{QStringLiteral("default"), QString()}}));
        QTRY_COMPARE_WITH_TIMEOUT(recorded.count(), 1, kTimeoutMs);
        QCOMPARE(tableRaw(page.compareWidget(), 0, views::CompareTableModel::PeakReservedColumn), 1194 * kMiB);
    }

    // A session opens without a writer (nothing written until the user records); the window opens
    // the writer when Compare is pressed, so the page must not claim that it records nothing.
    void sessionWithoutWriterSaysCompareRecordsIntoIt() {
        { storage::SessionWriter create(path_.toStdString()); }
        app::ComparePage page;
        page.setSession(path_, nullptr);
        QVERIFY2(page.lastMessage().contains(QStringLiteral("records one run per config into this session")),
                 qPrintable(page.lastMessage()));
        QVERIFY2(!page.lastMessage().contains(QStringLiteral("nothing")), qPrintable(page.lastMessage()));
    }

    void readOnlySessionRefuses() {
        { storage::SessionWriter create(path_.toStdString()); }
        QFile file(path_);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray before = file.readAll();
        file.close();
        app::ComparePage page;
        page.setSession(path_, nullptr);
        QSignalSpy busy(&page, &app::ComparePage::busyChanged);
        QSignalSpy status(&page, &app::ComparePage::statusMessage);
        page.startCompare(frag101({{QStringLiteral("default"), QString()}}));
        QVERIFY(!page.isBusy());
        QCOMPARE(busy.count(), 0);
        QCOMPARE(status.count(), 1);
        QVERIFY2(page.lastMessage().contains(QStringLiteral("read-only")), qPrintable(page.lastMessage()));
        QVERIFY(page.findChild<QLabel*>()->text().contains(QStringLiteral("read-only")));
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(file.readAll(), before);
        QCOMPARE(page.compareWidget()->tableModel()->rowCount(), 0);
    }

    void badInputIsSaidClearly() {
        storage::SessionWriter writer(path_.toStdString());
        app::ComparePage page;
        page.setSession(path_, &writer);
        page.startCompare(frag101({{QStringLiteral("bad"), QStringLiteral("garbage_interval:5")}}));
        QTRY_VERIFY_WITH_TIMEOUT(!page.isBusy(), kTimeoutMs);
        QVERIFY2(page.lastMessage().contains(QStringLiteral("garbage_interval:5")), qPrintable(page.lastMessage()));
        QVERIFY2(page.lastMessage().contains(QStringLiteral("Unrecognized key")), qPrintable(page.lastMessage()));
        app::CompareRequest unknown = frag101({{QStringLiteral("default"), QString()}});
        unknown.workload = QStringLiteral("no-such-workload");
        page.startCompare(unknown);
        QTRY_VERIFY_WITH_TIMEOUT(!page.isBusy(), kTimeoutMs);
        QVERIFY2(page.lastMessage().contains(QStringLiteral("no-such-workload")), qPrintable(page.lastMessage()));
        writer.flush();
        storage::SessionReader reader(path_.toStdString());
        QCOMPARE(reader.runs().size(), std::size_t(0));
    }

private:
    std::unique_ptr<QTemporaryDir> dir_;
    QString path_;
};

QTEST_MAIN(TestComparePage)
#include "TestComparePage.moc"
