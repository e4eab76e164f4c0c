// The OOM tab in the real main window: a session whose run ran out of memory (the built-in
// oom-with-free-memory workload, recorded as the app records it) opens with the OOM tab in front,
// its headline and facts read from the oom event and the state right after it; the "Blocks and
// call stacks at the failure" button moves the scrubber to the oom event and shows the Stacks
// tab there; a run without an OOM hides the tab again; a view chosen on purpose (a lesson's, --view)
// is not overridden. A PyTorch snapshot pickle recorded up to
// its OOM (tests/replay/OomRecording, under a memory fraction of an H100) opens the same way, and
// its answer fills in from the analysis: the headline `allocscope-cli oom` prints first, PyTorch's
// message, and the what-if rows with expandable_segments:True avoiding the OOM.
#include <QtTest>

#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTreeWidget>

#include "allocator/config/ConfigParser.h"
#include "allocator/device/GpuPresets.h"
#include "allocator/workloads/WorkloadRegistry.h"
#include "app/gui/MainWindow.h"
#include "app/gui/OomAnswerAdapter.h"
#include "app/gui/OomAnswerController.h"
#include "app/gui/StacksPage.h"
#include "views/charts/TimelineChartView.h"
#include "storage/session/ProgramRecording.h"
#include "storage/session/SessionWriter.h"
#include "tests/replay/OomRecording.h"
#include "views/widgets/EventScrubber.h"
#include "views/widgets/OomAnswerView.h"
#include "views/widgets/OomWhatIfModel.h"
#include "views/widgets/RunListModel.h"
#include "views/widgets/RunListWidget.h"

using allocscope::app::MainWindow;
namespace alloc = allocscope::alloc;
namespace storage = allocscope::storage;
namespace views = allocscope::views;

namespace {
constexpr int kTimeout = 120000;  // sanitizer builds on a loaded 2-core machine

// Records `workload` (its defaults) on its default GPU under `config`, as the app's Run does.
void record(storage::SessionWriter& writer, const std::string& workloadName, const std::string& config) {
    const alloc::Workload& workload = alloc::WorkloadRegistry::instance().get(workloadName);
    const alloc::GeneratedProgram program = workload.generate(workload.resolve(), 1);
    const alloc::GpuPreset preset = *alloc::findGpuPreset(workload.defaultGpu());
    storage::RecordTarget target;
    target.info.name = workloadName + " · " + (config.empty() ? "default" : config);
    target.info.config = config;
    target.info.gpu = preset.name;
    target.info.totalMemory = preset.totalMemory;
    target.config = alloc::parseConfig(config).config;
    target.totalMemory = preset.totalMemory;
    target.otherMemory = preset.contextMemory;
    storage::recordProgram(writer, program.program, &program.stacks, target);
}
}  // namespace

class TestOomAnswerTab : public QObject {
    Q_OBJECT
private:
    QTemporaryDir dir_;
    QString session_;

private slots:
    void initTestCase() {
        QCoreApplication::setOrganizationName("AllocScopeTest");
        QCoreApplication::setApplicationName("TestOomAnswerTab");
        QSettings().clear();
        QVERIFY(dir_.isValid());
        session_ = dir_.filePath("oom.allocscope");
        storage::SessionWriter writer(session_.toStdString());
        record(writer, "oom-with-free-memory", "");                          // run 1: the OOM
        record(writer, "oom-with-free-memory", "expandable_segments:True");  // run 2: none
        writer.flush();
    }

    // The domain's answer in view terms: the CLI's "yes: …" as a title, the interval's ends, the
    // verdict over the interval only for an interval, "default" as the view's own word.
    void theAnalysisInViewTerms() {
        alloc::OomAnswer answer;
        answer.headline = "yes: expandable_segments:True would have avoided this OOM";
        answer.requested = 256ull << 20;
        answer.opIndex = 12;
        answer.limit.source = alloc::MemoryLimit::Source::Inferred;
        answer.limit.cause = alloc::MemoryLimit::Cause::MemoryFraction;
        answer.limit.bytes = 1900ull << 20;
        answer.limit.low = 1843ull << 20;
        answer.limit.high = 1950ull << 20;
        answer.reserved = 1740ull << 20;
        answer.allocated = 1200ull << 20;
        answer.cachedFree = 540ull << 20;
        answer.largestFree = 180ull << 20;
        answer.fragmented = true;
        answer.pytorchMessage = "CUDA out of memory. Tried to allocate 256.00 MiB.";
        alloc::OomWhatIfRow def;
        def.config = "default";
        def.recorded = true;
        def.oom = true;
        def.oomOp = 12;
        def.verdict = "OOM at every limit in the interval";
        alloc::OomWhatIfRow exp;
        exp.config = "expandable_segments:True";
        exp.peakReserved = 1464ull << 20;
        exp.headroom = 436ll << 20;
        exp.verdict = "OOMs below 1.85 GiB";
        answer.whatIf = {def, exp};
        views::OomAnswerData data;
        data.whatIfNote = QStringLiteral("Replaying…");
        allocscope::app::OomAnswerAdapter::applyAnalysis(data, answer);
        QCOMPARE(data.headline, QStringLiteral("Yes: expandable_segments:True would have avoided this OOM"));
        QCOMPARE(data.limit.low, 1843ull << 20);
        QCOMPARE(data.limit.high, 1950ull << 20);
        QVERIFY2(data.limit.how.startsWith(QStringLiteral("inferred from the recorded OOM: a memory fraction")), qPrintable(data.limit.how));
        QCOMPARE(data.verdict, views::OomVerdict::Fragmentation);
        QCOMPARE(data.whatIf.size(), std::size_t{2});
        QCOMPARE(data.whatIf[0].config, QString());
        QCOMPARE(data.whatIf[0].where, QStringLiteral("op 12"));
        QCOMPARE(data.whatIf[0].headroom, qint64{-1});
        QCOMPARE(data.whatIf[1].overInterval, QStringLiteral("OOMs below 1.85 GiB"));
        QCOMPARE(data.whatIf[1].headroom, qint64{436} << 20);
        QVERIFY(data.whatIfNote.isEmpty());
        // A point limit: no interval verdicts.
        answer.limit.low = answer.limit.high = answer.limit.bytes;
        views::OomAnswerData point;
        allocscope::app::OomAnswerAdapter::applyAnalysis(point, answer);
        QCOMPARE(point.limit.low, 1900ull << 20);
        QVERIFY(!point.limit.isInterval());
        QVERIFY(point.whatIf[1].overInterval.isEmpty());
    }

    void anOomRunOpensOnItsAnswer() {
        MainWindow window;
        window.resize(1280, 720);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        allocscope::app::OomAnswerController* oom = window.oomAnswer();
        QSignalSpy shown(oom, &allocscope::app::OomAnswerController::answerShown);
        QVERIFY(window.openFile(session_));
        QTRY_COMPARE_WITH_TIMEOUT(window.runList()->model()->rowCount(), 2, kTimeout);
        QTRY_COMPARE_WITH_TIMEOUT(window.currentRun(), 1, kTimeout);
        QTabWidget* tabs = window.viewTabs();
        const int tab = tabs->indexOf(oom->view());
        QVERIFY(tab >= 0);
        QVERIFY(tabs->isTabVisible(tab));
        QCOMPARE(tabs->currentWidget(), oom->view());  // in front, before anything else
        // All eight tabs stay in the 1280 px window's tab bar: none scrolled out of sight.
        const QTabBar* bar = tabs->tabBar();
        QVERIFY2(bar->tabRect(0).left() >= 0 && bar->tabRect(tab).right() < bar->width(),
                 qPrintable(QString("tabs span %1..%2 of a %3 px bar").arg(bar->tabRect(0).left()).arg(bar->tabRect(tab).right()).arg(bar->width())));
        QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), kTimeout);
        QTRY_VERIFY_WITH_TIMEOUT(!oom->isComputing(), kTimeout);

        // The answer, from the oom event and the state right after it.
        const views::OomAnswerView* view = oom->view();
        QVERIFY(view->headlineLabel()->isVisible());
        const QString headline = view->headlineLabel()->text();
        QVERIFY2(headline.startsWith(QStringLiteral("Fragmentation, not a full GPU: ")) && headline.contains(QStringLiteral("256 MiB request")),
                 qPrintable(headline));
        const views::OomAnswerData& answer = view->answer();
        QCOMPARE(answer.run, 1);
        QCOMPARE(answer.requestBytes, 256ull << 20);
        QCOMPARE(answer.verdict, views::OomVerdict::Fragmentation);
        QVERIFY(answer.cachedFree > static_cast<qint64>(answer.requestBytes));  // gigabytes of holes...
        QVERIFY(answer.largestFree < static_cast<qint64>(answer.requestBytes));  // ...none of them big enough
        QVERIFY(answer.limit.known());
        QVERIFY(answer.event >= 0);
        QVERIFY(!answer.holders.empty());
        QVERIFY(view->facts().front().startsWith(QStringLiteral("Request: 256 MiB on stream 0 (default)")));
        QVERIFY(view->holders()->topLevelItemCount() > 0);
        // A workload run has no recording to replay under other configs: the view says so.
        QVERIFY(answer.whatIf.empty());
        QVERIFY(!answer.whatIfNote.isEmpty());

        // The blocks and call stacks at the failure: the Stacks tab at the oom event.
        QTest::mouseClick(view->stacksButton(), Qt::LeftButton);
        QCOMPARE(tabs->currentWidget(), static_cast<QWidget*>(window.stacksPage()));
        QTRY_COMPARE_WITH_TIMEOUT(window.scrubber()->currentEvent(), answer.event, kTimeout);
        QTRY_COMPARE_WITH_TIMEOUT(window.stacksPage()->result().event, answer.event, kTimeout);

        // A run without an OOM: no OOM tab.
        window.runList()->selectRun(2);
        QTRY_COMPARE_WITH_TIMEOUT(window.currentRun(), 2, kTimeout);
        QVERIFY(!tabs->isTabVisible(tab));
        QVERIFY(tabs->currentWidget() != oom->view());
        // And back: in front again.
        window.runList()->selectRun(1);
        QTRY_COMPARE_WITH_TIMEOUT(window.currentRun(), 1, kTimeout);
        QVERIFY(tabs->isTabVisible(tab));
        QCOMPARE(tabs->currentWidget(), oom->view());
        QTRY_VERIFY_WITH_TIMEOUT(!oom->isComputing(), kTimeout);
        QCOMPARE(oom->view()->answer().requestBytes, 256ull << 20);
    }

    // A view chosen on purpose while the session still loads (a lesson's step, --view) stays in
    // front; the OOM tab is there beside it.
    void aChosenViewIsKept() {
        MainWindow window;
        window.resize(1280, 720);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(window.openFile(session_));
        window.selectRun(1);
        window.showView(QStringLiteral("timeline"));
        QTRY_COMPARE_WITH_TIMEOUT(window.currentRun(), 1, kTimeout);
        QTRY_VERIFY_WITH_TIMEOUT(!window.oomAnswer()->isComputing(), kTimeout);
        QTabWidget* tabs = window.viewTabs();
        QCOMPARE(tabs->currentWidget(), static_cast<QWidget*>(window.timeline()));
        QVERIFY(tabs->isTabVisible(tabs->indexOf(window.oomAnswer()->view())));
        window.showView(QStringLiteral("oom"));
        QCOMPARE(tabs->currentWidget(), window.oomAnswer()->view());
    }

    void anOomSnapshotOpensOnItsAnswerWithTheWhatIf() {
        // 3 x (200 | 180 MiB hole | 200) then 256 MiB, under memory fraction 0.023 of an H100.
        const QString pickle = dir_.filePath("fraction.pickle");
        const oomtest::Recording recording = oomtest::record({}, "", {85'017'493'504ull, 552'402'944ull, 0.023}, pickle.toStdString());
        QVERIFY(recording.oomOp.has_value());
        MainWindow window;
        window.resize(1280, 720);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        allocscope::app::OomAnswerController* oom = window.oomAnswer();
        QSignalSpy done(oom, &allocscope::app::OomAnswerController::analysisDone);
        QVERIFY(window.openFile(pickle));
        QTRY_COMPARE_WITH_TIMEOUT(window.currentRun(), 1, kTimeout);
        QCOMPARE(window.viewTabs()->currentWidget(), oom->view());
        QTRY_VERIFY_WITH_TIMEOUT(!done.isEmpty(), kTimeout);
        const views::OomAnswerView* view = oom->view();
        const views::OomAnswerData& answer = view->answer();
        const QString headline = view->headlineLabel()->text();
        QVERIFY2(headline.startsWith(QStringLiteral("Yes: expandable_segments:True would have avoided this OOM")), qPrintable(headline));
        QCOMPARE(answer.op, static_cast<qint64>(*recording.oomOp));
        QCOMPARE(answer.requestBytes, 256ull << 20);
        QCOMPARE(answer.largestFree, qint64{180} << 20);
        QCOMPARE(answer.verdict, views::OomVerdict::Fragmentation);
        QVERIFY(answer.limit.known());
        QVERIFY2(answer.limit.how.startsWith(QStringLiteral("inferred from the recorded OOM")), qPrintable(answer.limit.how));
        QVERIFY2(view->messageBox()->toPlainText().startsWith(QStringLiteral("CUDA out of memory. Tried to allocate 256.00 MiB.")),
                 qPrintable(view->messageBox()->toPlainText()));
        // The what-if: the recorded config first and OOMing, expandable segments not.
        const views::OomWhatIfModel* model = view->whatIfModel();
        QVERIFY(model->rowCount() >= 2);
        QVERIFY(model->rows().front().recorded);
        QVERIFY(model->rows().front().oom);
        bool expandableAvoids = false;
        for (const views::OomWhatIfRow& row : model->rows()) {
            if (row.config == QLatin1String("expandable_segments:True")) expandableAvoids = !row.oom && row.headroom > 0;
        }
        QVERIFY(expandableAvoids);
        QVERIFY(answer.whatIfNote.isEmpty());
    }

    // A real one: PyTorch 2.11 on an H200 under memory fraction 0.03, out of memory at a 282 MiB
    // request with 1.46 GiB reserved but unallocated (tests/data/oom/README.md); every config of
    // recommend's grid but max_split_size_mb:512 ran that program without an OOM there.
    void aRealPyTorchOomSnapshot() {
        MainWindow window;
        window.resize(1280, 720);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        allocscope::app::OomAnswerController* oom = window.oomAnswer();
        QSignalSpy done(oom, &allocscope::app::OomAnswerController::analysisDone);
        QVERIFY(window.openFile(QStringLiteral(ALLOCSCOPE_TEST_DATA "/oom/kv_frac_oom__default.pickle")));
        QTRY_COMPARE_WITH_TIMEOUT(window.currentRun(), 1, kTimeout);
        QCOMPARE(window.viewTabs()->currentWidget(), oom->view());
        QTRY_VERIFY_WITH_TIMEOUT(!done.isEmpty(), 5 * kTimeout);
        const views::OomAnswerView* view = oom->view();
        const QString headline = view->headlineLabel()->text();
        QVERIFY2(headline.startsWith(QStringLiteral("Yes: expandable_segments:True would have avoided this OOM")), qPrintable(headline));
        QVERIFY2(view->messageBox()->toPlainText().startsWith(QStringLiteral("CUDA out of memory. Tried to allocate 282.00 MiB.")),
                 qPrintable(view->messageBox()->toPlainText()));
        QVERIFY(view->answer().whatIf.size() >= 12);
        QVERIFY(view->answer().holders.size() > 0);
    }
};

QTEST_MAIN(TestOomAnswerTab)
#include "TestOomAnswerTab.moc"
