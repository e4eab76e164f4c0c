// "This recording" at the limit its import inferred from the recorded OOM (issue 35), in the real
// main window: opening kv_frac_oom (recorded at memory fraction 0.03 of an H200) presets the GPU
// and fraction to the inferred device and says "limit inferred from the OOM at op …" under them;
// Run under the recorded config replays exact there; a hand-set fraction makes the limit "as
// given"; a recording of a full device (its limit no preset's context) replays exact too; Compare says the same line above its answer. A snapshot without an OOM keeps the preset
// and says nothing of a limit.
#include <QtTest>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QPushButton>
#include <QSettings>
#include <QTabWidget>

#include "allocator/device/GpuPresets.h"
#include "app/gui/ComparePage.h"
#include "app/gui/ExperimentPanel.h"
#include "app/gui/MainWindow.h"
#include "storage/session/SessionReader.h"
#include "views/widgets/CompareWidget.h"
#include "views/widgets/ConfigEditorWidget.h"
#include "views/widgets/ConfigListWidget.h"
#include "views/widgets/RunListModel.h"
#include "views/widgets/RunListWidget.h"

using allocscope::app::MainWindow;
namespace alloc = allocscope::alloc;
namespace storage = allocscope::storage;
namespace views = allocscope::views;

namespace {
constexpr int kTimeout = 120000;  // sanitizer builds on a loaded 2-core machine
const QString kInferred = QStringLiteral("limit inferred from the OOM at op");

QString dataPath(const char* path) { return QStringLiteral(ALLOCSCOPE_TEST_DATA "/") + QString::fromLatin1(path); }
}  // namespace

class TestWhatIfLimit : public QObject {
    Q_OBJECT
private:
    static void show(MainWindow& window) {
        window.resize(1280, 720);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
    }

    // Opens a snapshot as `allocscope FILE` does and waits until its run is offered as a program.
    static void openTrace(MainWindow& window, const QString& path) {
        QSignalSpy finished(&window, &MainWindow::jobFinished);
        QVERIFY(window.openFile(path));
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, kTimeout);
        QTRY_COMPARE_WITH_TIMEOUT(window.runList()->model()->rowCount(), 1, kTimeout);
        QTRY_VERIFY_WITH_TIMEOUT(window.experimentPanel()->isRecordingChosen(), kTimeout);
    }

private slots:
    void initTestCase() {
        QCoreApplication::setOrganizationName("AllocScopeTest");
        QCoreApplication::setApplicationName("TestWhatIfLimit");
        QSettings().clear();
    }

    void anOomRecordingReplaysExactAtItsInferredLimit() {
        MainWindow window;
        show(window);
        openTrace(window, dataPath("oom/kv_frac_oom__default.pickle"));
        auto* panel = window.experimentPanel();
        // The fields are the inferred device (0.03 of the H200's total, as recorded), not 80 GB.
        const storage::RunRow imported = storage::SessionReader(window.currentFile().toStdString()).run(1);
        QVERIFY(imported.info.memoryFraction < 1.0);
        QCOMPARE(panel->gpuBox()->currentData(Qt::UserRole + 1).toULongLong(), imported.info.totalMemory);
        QVERIFY(panel->gpuBox()->currentData(Qt::UserRole + 1).toULongLong() != alloc::findGpuPreset(alloc::kDefaultGpuPreset)->totalMemory);
        QCOMPARE(panel->memoryFractionBox()->value(), 0.03);
        // And the line under them says whence: the OOM the recording holds (oom_op_index 2049).
        QLabel* line = panel->limitLabel();
        QTRY_VERIFY_WITH_TIMEOUT(line->isVisible(), kTimeout);
        QVERIFY2(line->text().startsWith(kInferred + QStringLiteral(" 2049: ")), qPrintable(line->text()));
        QVERIFY(line->text().contains(QStringLiteral("between")));
        QVERIFY(line->wordWrap());

        // Run under the recorded config: the replay at the inferred limit is the recording.
        QSignalSpy finished(&window, &MainWindow::jobFinished);
        QTest::mouseClick(panel->runButton(), Qt::LeftButton);
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, kTimeout);
        QCOMPARE(finished.at(0).at(0).toBool(), true);
        QTRY_COMPARE_WITH_TIMEOUT(window.runList()->model()->rowCount(), 2, kTimeout);
        const views::RunListRow row = window.runList()->model()->runs().at(1);
        QCOMPARE(row.verdict, views::RunVerdictKind::Exact);
        const storage::RunRow replayed = storage::SessionReader(window.currentFile().toStdString()).run(row.number);
        QCOMPARE(replayed.info.totalMemory, imported.info.totalMemory);
        QCOMPARE(replayed.info.memoryFraction, imported.info.memoryFraction);

        // A fraction set by hand: the limit is the user's now, and the line says so.
        panel->memoryFractionBox()->setValue(0.5);
        QVERIFY2(!line->text().contains(kInferred), qPrintable(line->text()));
        QVERIFY2(line->text().contains(QStringLiteral("as given")), qPrintable(line->text()));
        QVERIFY(line->text().contains(QStringLiteral("memory fraction 0.5")));
    }

    // kv_fulldev_oom ran on a device another process had filled: the inferred limit is the h100's
    // total less far more than a CUDA context, which the GPU field (the h100-80gb preset, same
    // total) cannot show. Run still replays at the inferred limit, so the replay is exact.
    void aFullDeviceRecordingReplaysExactAtItsInferredLimit() {
        MainWindow window;
        show(window);
        openTrace(window, dataPath("oom/kv_fulldev_oom__default.pickle"));
        auto* panel = window.experimentPanel();
        QLabel* line = panel->limitLabel();
        QTRY_VERIFY_WITH_TIMEOUT(line->isVisible(), kTimeout);
        QVERIFY2(line->text().startsWith(kInferred + QStringLiteral(" 1347: ")), qPrintable(line->text()));
        QVERIFY(line->text().contains(QStringLiteral("the device was full")));
        QCOMPARE(panel->memoryFractionBox()->value(), 1.0);
        QSignalSpy finished(&window, &MainWindow::jobFinished);
        QTest::mouseClick(panel->runButton(), Qt::LeftButton);
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, kTimeout);
        QCOMPARE(finished.at(0).at(0).toBool(), true);
        QTRY_COMPARE_WITH_TIMEOUT(window.runList()->model()->rowCount(), 2, kTimeout);
        QCOMPARE(window.runList()->model()->runs().at(1).verdict, views::RunVerdictKind::Exact);
    }

    void compareSaysTheInferredLimitAboveItsAnswer() {
        MainWindow window;
        show(window);
        openTrace(window, dataPath("oom/kv_frac_oom__default.pickle"));
        auto* panel = window.experimentPanel();
        QTRY_VERIFY_WITH_TIMEOUT(panel->limitLabel()->isVisible(), kTimeout);
        const QString inferredLine = panel->limitLabel()->text();
        panel->compareList()->setEntries({{QStringLiteral("expandable_segments:True"), true}});
        QCOMPARE(panel->compareConfigs().size(), 2);
        QTest::mouseClick(panel->compareButton(), Qt::LeftButton);
        QCOMPARE(window.viewTabs()->currentWidget(), static_cast<QWidget*>(window.comparePage()));
        QTRY_VERIFY_WITH_TIMEOUT(!window.comparePage()->isBusy(), kTimeout);
        QLabel* line = window.comparePage()->limitLabel();
        QVERIFY(line->isVisible());
        QCOMPARE(line->text(), inferredLine);
        QVERIFY(line->text().startsWith(kInferred));
        // The recorded config replayed at that limit is the recording: same peak reserved.
        const views::CompareData& data = window.comparePage()->compareWidget()->data();
        QCOMPARE(data.runs.size(), std::size_t{3});
        QCOMPARE(data.runs.at(1).peakReserved, data.runs.front().peakReserved);
        QVERIFY(data.runs.front().ooms > 0);
        QCOMPARE(data.runs.at(1).ooms, data.runs.front().ooms);
        QCOMPARE(data.runs.at(1).firstOomOp, data.runs.front().firstOomOp);
    }

    void aRecordingWithoutOomKeepsThePresetAndSaysNoLimit() {
        MainWindow window;
        show(window);
        openTrace(window, dataPath("traces/frag101__default.pickle"));
        auto* panel = window.experimentPanel();
        QCOMPARE(panel->gpuBox()->currentData(Qt::UserRole + 1).toULongLong(), alloc::findGpuPreset(alloc::kDefaultGpuPreset)->totalMemory);
        QCOMPARE(panel->memoryFractionBox()->value(), 1.0);
        QVERIFY(!panel->limitLabel()->isVisible());
        QVERIFY(panel->limitLabel()->text().isEmpty());
        QVERIFY(panel->memoryFractionBox()->isVisible());  // the recording's own rows are shown
        panel->compareList()->setEntries({{QStringLiteral("expandable_segments:True"), true}});
        QTest::mouseClick(panel->compareButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!window.comparePage()->isBusy(), kTimeout);
        QVERIFY(!window.comparePage()->limitLabel()->isVisible());
    }
};

QTEST_MAIN(TestWhatIfLimit)
#include "TestWhatIfLimit.moc"
