// The main window on an imported CUDA-graph trace (cudagraph_mlp__default: three segments in the
// graph's pool (1,0), the replay exact): the run list says "exact" and no banner shows; the
// segment map labels the graph pool's rows; the inspector names a graph-pool block's pool. The
// same session as an older build left it (no run_verdict table) opens read-only and unchanged and
// reads "unknown", with the banner saying the replay is not known to match. A replay that
// diverged carries the banner's warning.
#include <QtTest>

#include <QSettings>
#include <QTemporaryDir>

#include "tests/FileBytes.h"
#include "app/gui/MainWindow.h"
#include "app/gui/RunStateService.h"
#include "app/gui/ViewDataAdapters.h"
#include "storage/session/ProgramRecording.h"
#include "storage/session/SessionReader.h"
#include "storage/session/SessionWriter.h"
#include "storage/session/SqliteDb.h"
#include "views/util/Formatting.h"
#include "views/widgets/BlockInspectorWidget.h"
#include "views/widgets/RunListModel.h"
#include "views/widgets/RunListWidget.h"
#include "views/widgets/RunVerdictBanner.h"
#include "views/widgets/SegmentMapCanvas.h"
#include "views/widgets/SegmentMapWidget.h"

using allocscope::app::MainWindow;
namespace storage = allocscope::storage;
namespace views = allocscope::views;
namespace alloc = allocscope::alloc;

namespace {
constexpr int kTimeout = 60000;

void importInto(const QString& session, const char* trace, std::optional<double> fraction = std::nullopt) {
    storage::SessionWriter writer(session.toStdString());
    storage::ImportTarget target;
    target.totalMemory = 85'017'493'504ull;  // the recording's H100
    target.memoryFraction = fraction;
    storage::importTraceFile(writer, qEnvironmentVariable("ALLOCSCOPE_TEST_DATA").toStdString() + "/" + trace, target);
    writer.flush();
}

QString verdictCell(MainWindow& window, int row) {
    const views::RunListModel* model = window.runList()->model();
    return model->data(model->index(row, views::RunListModel::VerdictColumn)).toString();
}

views::RunVerdictBanner* banner(MainWindow& window) { return window.findChild<views::RunVerdictBanner*>(); }

void openRun(MainWindow& window, const QString& session) {
    QVERIFY(window.openSessionFile(session));
    QTRY_COMPARE_WITH_TIMEOUT(window.runList()->model()->rowCount(), 1, kTimeout);
    QTRY_VERIFY_WITH_TIMEOUT(window.currentFrame().run == 1 && !window.currentFrame().approximate, kTimeout);
}

}  // namespace

class TestMainWindowPools : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    QString mlp_;

private slots:
    void initTestCase() {
        QCoreApplication::setOrganizationName("AllocScopeTest");
        QCoreApplication::setApplicationName("TestMainWindowPools");
        QSettings().clear();
        QVERIFY(dir_.isValid());
        mlp_ = dir_.filePath("mlp.allocscope");
        importInto(mlp_, "pools/cudagraph_mlp__default.pickle");
    }

    void poolLabels_data() {
        QTest::addColumn<quint64>("first");
        QTest::addColumn<quint64>("second");
        QTest::addColumn<QString>("label");
        QTest::newRow("default") << quint64(0) << quint64(0) << "default pool";
        QTest::newRow("graph") << quint64(1) << quint64(0) << "graph pool (1,0)";
        // (0, n): a MemPool or graph_pool_handle(); the id cannot tell, so it is not guessed.
        QTest::newRow("mempool or handle") << quint64(0) << quint64(1) << "private pool (0,1)";
        QTest::newRow("other") << quint64(2) << quint64(3) << "private pool (2,3)";
        // The replay's placeholder for a pool the final snapshot does not name is not a PyTorch id.
        QTest::newRow("inferred") << quint64(0) << quint64(0x1'0000'0000ull) << "private pool (id not recorded)";
        // Another MemPool destructor's releases; a capture found to start its own pool at entry 88.
        QTest::newRow("inferred second") << quint64(0) << quint64(0x1'0000'0001ull) << "private pool (not recorded #2)";
        QTest::newRow("inferred capture") << quint64(0x1'0000'0000ull + 1 + 88) << quint64(0) << "graph pool (id not recorded)";
    }
    void poolLabels() {
        QFETCH(quint64, first);
        QFETCH(quint64, second);
        QFETCH(QString, label);
        QCOMPARE(allocscope::app::poolLabel(alloc::PoolId{first, second}), label);
    }

    void graphPoolIsShownInTheMapAndInspector() {
        MainWindow window;
        window.resize(1280, 720);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        openRun(window, mlp_);
        QCOMPARE(verdictCell(window, 0), QString("exact"));
        QVERIFY(banner(window)->isHidden());

        // The final state: PyTorch's snapshot, with all three graph-pool segments.
        const qint64 last = static_cast<qint64>(storage::SessionReader(mlp_.toStdString()).run(1).eventCount) - 1;
        window.goToEvent(last);
        QTRY_VERIFY_WITH_TIMEOUT(window.currentFrame().shown == last && !window.currentFrame().approximate, kTimeout);
        window.showView("segments");
        const views::SegmentMapData& map = window.segmentMap()->data();
        int graphRows = 0;
        quint64 graphBlock = 0;
        for (const views::ViewSegment& s : map.segments) {
            if (s.poolLabel == QLatin1String("graph pool (1,0)")) {
                ++graphRows;
                if (graphBlock == 0) graphBlock = s.blocks.front().address;
            } else {
                QVERIFY2(s.poolLabel.isEmpty(), qPrintable(s.poolLabel));
            }
        }
        QCOMPARE(graphRows, 3);
        views::SegmentMapCanvas* canvas = window.segmentMap()->canvas();
        int tagged = 0;
        const QFontMetrics fm(canvas->font());
        for (int i = 0; i < static_cast<int>(map.segments.size()); ++i) {
            tagged += canvas->rowTags(i).endsWith("graph pool (1,0)");
            // The label column fits the row's address, size and tags whole (the trace's streams
            // are 10-digit handles): the pool is drawn, not elided.
            const QString label = views::Formatting::address(map.segments[static_cast<std::size_t>(i)].address) +
                                  QStringLiteral("  000.0 MiB  ") + canvas->rowTags(i);
            QVERIFY2(canvas->labelWidth() > fm.horizontalAdvance(label), qPrintable(label));
        }
        QCOMPARE(tagged, 3);

        QTRY_VERIFY_WITH_TIMEOUT(canvas->blockRect(graphBlock).isValid(), kTimeout);
        QTest::mouseClick(canvas->viewport(), Qt::LeftButton, {}, canvas->blockRect(graphBlock).center());
        QTRY_VERIFY_WITH_TIMEOUT(window.inspector()->data().valid && window.inspector()->data().address == graphBlock, kTimeout);
        QCOMPARE(window.inspector()->data().memoryPool, QString("graph pool (1,0)"));
        QVERIFY(window.inspector()->plainText().contains("graph pool (1,0)"));
    }

    // The session as a build before verdicts left it: opened read-only, left byte-identical, and
    // never called exact.
    void anOlderSessionIsNotCalledExact() {
        const QString old = dir_.filePath("old.allocscope");
        QVERIFY(QFile::copy(mlp_, old));
        {
            storage::SqliteDb db(old.toStdString(), storage::SqliteDb::Mode::ReadWriteCreate);
            db.exec("DROP TABLE run_verdict");
        }
        const QByteArray before = testfiles::sha256Of(old);
        {
            MainWindow window;
            window.resize(1280, 720);
            window.show();
            QVERIFY(QTest::qWaitForWindowExposed(&window));
            openRun(window, old);
            QCOMPARE(verdictCell(window, 0), QString("unknown"));
            QVERIFY(!banner(window)->isHidden());
            QVERIFY(banner(window)->text().contains("does not say whether the replay matched"));
            QVERIFY(!banner(window)->text().contains("exact"));
        }
        QCOMPARE(testfiles::sha256Of(old), before);
        storage::SqliteDb db(old.toStdString(), storage::SqliteDb::Mode::ReadOnly);
        QCOMPARE(db.queryInt("SELECT count(*) FROM sqlite_master WHERE name = 'run_verdict'"), std::int64_t{0});
    }

    void aDivergedReplayCarriesTheWarning() {
        const QString session = dir_.filePath("diverged.allocscope");
        importInto(session, "traces/frag101__default.pickle", 0.001);
        MainWindow window;
        window.resize(1280, 720);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        openRun(window, session);
        QVERIFY2(verdictCell(window, 0).startsWith("diverged at entry "), qPrintable(verdictCell(window, 0)));
        QTRY_VERIFY_WITH_TIMEOUT(!banner(window)->isHidden(), kTimeout);
        QVERIFY(banner(window)->isWarning());
        QVERIFY(banner(window)->text().startsWith("Run 1 diverged from the recording at trace entry "));
        QVERIFY(banner(window)->text().endsWith("numbers are not PyTorch's."));
    }
};

QTEST_MAIN(TestMainWindowPools)
#include "TestMainWindowPools.moc"
