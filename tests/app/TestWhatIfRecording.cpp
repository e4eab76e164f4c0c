// "This recording" in the real main window, driven as a user would: open a shared PyTorch
// snapshot, find it offered as the program, Run it under expandable_segments:True (statistics
// equal to `allocscope-cli replay … --config expandable_segments:True --stats-json -`), Compare it
// under three configs (one answer line per config against the recording), make the OOM appear
// with a memory fraction and see expandable_segments avoid it, record from a read-only session
// (one question, a copy), and cancel.
#include <QtTest>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QMessageBox>
#include <QProcess>
#include <QPushButton>
#include <QSettings>
#include <QTemporaryDir>

#include "allocator/config/ConfigParser.h"
#include "app/gui/ComparePage.h"
#include "app/gui/ExperimentPanel.h"
#include "app/gui/MainWindow.h"
#include "app/cli/StatsJson.h"
#include "storage/import/TraceFile.h"
#include "storage/session/ProgramRecording.h"
#include "storage/session/SessionReader.h"
#include "storage/session/SessionWriter.h"
#include "tests/FileBytes.h"
#include "views/widgets/CompareTableModel.h"
#include "views/widgets/CompareWidget.h"
#include "views/widgets/ConfigEditorWidget.h"
#include "views/widgets/ConfigListWidget.h"
#include "views/widgets/ParamFormWidget.h"
#include "views/widgets/RunListModel.h"
#include "views/widgets/RunListWidget.h"
#include "views/widgets/WhatIfAnswerView.h"

using allocscope::app::MainWindow;
namespace alloc = allocscope::alloc;
namespace storage = allocscope::storage;
namespace views = allocscope::views;

namespace {
constexpr int kTimeout = 120000;  // sanitizer builds on a loaded 2-core machine

QString tracePath(const char* name) { return QStringLiteral(ALLOCSCOPE_TEST_DATA "/traces/") + QString::fromLatin1(name); }

// What `allocscope-cli` prints on stdout for `args` (the statistics JSON with --stats-json -).
QByteArray cli(const QStringList& args) {
    QProcess process;
    process.start(qEnvironmentVariable("ALLOCSCOPE_CLI"), args);
    if (!process.waitForFinished(kTimeout) || process.exitCode() != 0) return QByteArray("failed: ") + process.readAllStandardError();
    return process.readAllStandardOutput();
}

// Answers the read-only question with Save and the Save dialog with `copy`.
class CopyDialogAnswerer {
public:
    QStringList questions;
    explicit CopyDialogAnswerer(QString copy) : copy_(std::move(copy)) {
        timer_.setInterval(20);
        QObject::connect(&timer_, &QTimer::timeout, [this] {
            for (QWidget* w : QApplication::topLevelWidgets()) {
                if (!w->isVisible()) continue;
                if (auto* box = qobject_cast<QMessageBox*>(w)) {
                    questions << box->text();
                    if (QAbstractButton* save = box->button(QMessageBox::Save)) save->click();
                    else box->done(QMessageBox::Ok);
                } else if (auto* dialog = qobject_cast<QFileDialog*>(w)) {
                    dialog->selectFile(copy_);
                    QMetaObject::invokeMethod(dialog, "accept");  // a slot, protected in C++
                }
            }
        });
        timer_.start();
    }

private:
    QString copy_;
    QTimer timer_;
};
}  // namespace

class TestWhatIfRecording : public QObject {
    Q_OBJECT
private:
    QTemporaryDir dir_;

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

    static void setCompareList(allocscope::app::ExperimentPanel* panel, const QStringList& configs) {
        QList<views::ConfigListEntry> entries;
        for (const QString& c : configs) entries.append({c, true});
        panel->compareList()->setEntries(entries);
    }

private slots:
    void initTestCase() {
        QCoreApplication::setOrganizationName("AllocScopeTest");
        QCoreApplication::setApplicationName("TestWhatIfRecording");
        QSettings().clear();
        QVERIFY(dir_.isValid());
        QVERIFY(!qEnvironmentVariable("ALLOCSCOPE_CLI").isEmpty());
    }

    void runReplaysTheRecordingUnderTheEditorsConfig() {
        const QString trace = tracePath("frag101__default.pickle");
        const QByteArray before = testfiles::sha256Of(trace);
        MainWindow window;
        show(window);
        openTrace(window, trace);
        auto* panel = window.experimentPanel();
        // "This recording" is chosen, with the recording's config, GPU and fraction.
        QVERIFY(panel->workloadBox()->currentText().startsWith(QStringLiteral("This recording: frag101__default.pickle")));
        const storage::TraceFile file = storage::TraceFile::read(trace.toStdString());
        QCOMPARE(panel->configEditor()->text(), QString::fromStdString(file.traces.front().settings.value_or("")));
        const storage::RunRow imported = storage::SessionReader(window.currentFile().toStdString()).run(1);
        QCOMPARE(panel->gpuBox()->currentData(Qt::UserRole + 1).toULongLong(), imported.info.totalMemory);
        QCOMPARE(panel->memoryFractionBox()->value(), imported.info.memoryFraction);
        QVERIFY(!panel->paramForm()->isVisible());
        // A demo workload can still be chosen, and the recording again.
        panel->workloadBox()->setCurrentIndex(1);
        QVERIFY(!panel->isRecordingChosen());
        QVERIFY(panel->paramForm()->isVisible());
        panel->workloadBox()->setCurrentIndex(0);
        QVERIFY(panel->isRecordingChosen());

        panel->configEditor()->setText(QStringLiteral("expandable_segments:True"));
        QSignalSpy finished(&window, &MainWindow::jobFinished);
        QTest::mouseClick(panel->runButton(), Qt::LeftButton);
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, kTimeout);
        QCOMPARE(finished.at(0).at(0).toBool(), true);
        QTRY_COMPARE_WITH_TIMEOUT(window.runList()->model()->rowCount(), 2, kTimeout);
        const views::RunListRow row = window.runList()->model()->runs().at(1);
        QCOMPARE(row.name, QStringLiteral("frag101__default.pickle · expandable_segments:True"));
        QCOMPARE(row.config, QStringLiteral("expandable_segments:True"));
        QCOMPARE(row.verdict, views::RunVerdictKind::WhatIf);  // another config: never "exact"

        // The recorded run's memory_stats() are the CLI's, key for key.
        storage::SessionReader reader(window.currentFile().toStdString());
        const storage::RunRow recorded = reader.run(row.number);
        QVERIFY(recorded.summary.has_value());
        const QByteArray expected = cli({QStringLiteral("replay"), trace, QStringLiteral("--config"), QStringLiteral("expandable_segments:True"),
                                         QStringLiteral("--stats-json"), QStringLiteral("-")});
        QCOMPARE(QByteArray::fromStdString(allocscope::cli::statsToJson(recorded.summary->finalStats)), expected);
        QCOMPARE(testfiles::sha256Of(trace), before);  // the input file is only read
    }

    void compareRunsTheRecordingUnderThreeConfigs() {
        MainWindow window;
        show(window);
        openTrace(window, tracePath("frag101__default.pickle"));
        auto* panel = window.experimentPanel();
        setCompareList(panel, {QStringLiteral("expandable_segments:True"), QStringLiteral("max_split_size_mb:256")});
        const QList<QPair<QString, QString>> configs = panel->compareConfigs();
        QCOMPARE(configs.size(), 3);  // the editor's (recorded) config first
        QTest::mouseClick(panel->compareButton(), Qt::LeftButton);
        QCOMPARE(window.viewTabs()->currentWidget(), static_cast<QWidget*>(window.comparePage()));
        QTRY_VERIFY_WITH_TIMEOUT(!window.comparePage()->isBusy(), kTimeout);
        const views::CompareData& data = window.comparePage()->compareWidget()->data();
        // The recording itself first, then one recorded replay per config, on one op axis.
        QCOMPARE(data.runs.size(), std::size_t{4});
        QCOMPARE(data.runs.front().run, 1);
        for (const views::CompareRun& run : data.runs) {
            QVERIFY(!run.reservedTimeline.empty());
            QVERIFY(run.reservedTimeline.back().op < data.opCount);
        }
        // PyTorch's own peak for the recorded config: the replay reproduces the recording.
        QCOMPARE(data.runs.at(1).peakReserved, data.runs.front().peakReserved);
        QCOMPARE(data.runs.front().peakReserved, 1194ull * 1024 * 1024);
        // The answer: one line per config, each against the recording or the recorded config.
        const views::WhatIfAnswer& answer = window.comparePage()->answerView()->answer();
        QVERIFY(window.comparePage()->answerView()->isVisible());
        QCOMPARE(answer.lines.size(), std::size_t{3});
        QVERIFY(answer.lines.at(0).against.contains(QStringLiteral("the recording, run 1")));
        QVERIFY(answer.lines.at(1).against.contains(QStringLiteral("default replayed the same way")));
        // The status line counts the replays, not the recording shown beside them.
        QVERIFY2(window.comparePage()->lastMessage().startsWith(QStringLiteral("Compared 3 config")), qPrintable(window.comparePage()->lastMessage()));
        QVERIFY(window.comparePage()->lastMessage().contains(QStringLiteral("runs 2, 3, 4")));
        for (std::size_t i = 0; i < answer.lines.size(); ++i) {
            QCOMPARE(answer.lines[i].counts.peakReserved, data.runs.at(i + 1).peakReserved);
            QCOMPARE(answer.lines[i].counts.cudaMallocs, data.runs.at(i + 1).cudaMallocs);
            QVERIFY(answer.lines[i].smallestGpu.has_value());
            QCOMPARE(*answer.lines[i].smallestGpu, QStringLiteral("24gb"));  // 1.2 GiB fits the smallest card
            // How firm: a what-if replay counts the best-fit decisions that rested on modelled
            // addresses (frag101 has none); the recorded config is checked against the recording.
            QCOMPARE(answer.lines[i].modelledDecisions.has_value(), i > 0);
            if (i > 0) QCOMPARE(*answer.lines[i].modelledDecisions, quint64(0));
        }
        const QString text = window.comparePage()->answerView()->plainText();
        QVERIFY2(text.contains(QStringLiteral("expandable_segments:True (against default replayed the same way): no OOM either")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("no decision rested on a modelled address")), qPrintable(text));
        // A whole history: nothing is marked as a window's.
        QVERIFY(!text.contains(QStringLiteral("(window)")));
        QVERIFY(data.windowNote.isEmpty());
        QTRY_COMPARE_WITH_TIMEOUT(window.runList()->model()->rowCount(), 4, kTimeout);
    }

    // A ring-buffer recording (max_entries 3000): every run of its comparison covers only that
    // window, and the Compare tab and the answer say so beside the figures (issue 36).
    void aRingBufferRecordingsFiguresAreMarkedAsTheWindows() {
        MainWindow window;
        show(window);
        openTrace(window, QStringLiteral(ALLOCSCOPE_TEST_DATA "/pools/ringbuf_train__default.pickle"));
        auto* panel = window.experimentPanel();
        setCompareList(panel, {QStringLiteral("expandable_segments:True")});
        QTest::mouseClick(panel->compareButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!window.comparePage()->isBusy(), kTimeout);
        const views::CompareData& data = window.comparePage()->compareWidget()->data();
        QCOMPARE(data.runs.size(), std::size_t{3});
        for (const views::CompareRun& run : data.runs) QVERIFY2(run.windowOnly, qPrintable(run.label));
        QVERIFY2(data.windowNote.startsWith(QStringLiteral("window: figures marked (window) cover only the last 3000 of the run's trace entries")),
                 qPrintable(data.windowNote));
        const auto* model = window.comparePage()->compareWidget()->tableModel();
        QCOMPARE(model->headerData(views::CompareTableModel::PeakReservedColumn, Qt::Horizontal).toString(),
                 QStringLiteral("Peak reserved (window)"));
        const views::WhatIfAnswer& answer = window.comparePage()->answerView()->answer();
        QCOMPARE(answer.windowNote, data.windowNote);
        const QString text = window.comparePage()->answerView()->plainText();
        QVERIFY2(text.contains(QStringLiteral("(window)")) && text.endsWith(data.windowNote), qPrintable(text));
    }

    void expandableSegmentsAvoidsTheOomAtAMemoryFraction() {
        // The README's walk-through: kv_growth_limited at memory fraction 0.03 of an H100 OOMs 8
        // times under its recorded config (where the recording has no address, the driver model
        // places the segments) and not at all under expandable_segments:True.
        const QString trace = tracePath("kv_growth_limited__default.pickle");
        const auto cliOoms = [&trace](const QString& config) {
            QStringList args{QStringLiteral("replay"), trace, QStringLiteral("--memory-fraction"), QStringLiteral("0.03"),
                             QStringLiteral("--continue-after-oom"), QStringLiteral("--stats-json"), QStringLiteral("-")};
            if (!config.isNull()) args << QStringLiteral("--config") << config;
            const QByteArray json = cli(args);
            const QByteArray key = "\"num_ooms\": ";
            const qsizetype at = json.indexOf(key);
            return at < 0 ? -1 : json.mid(at + key.size(), json.indexOf(',', at) - at - key.size()).trimmed().toLongLong();
        };
        QCOMPARE(cliOoms(QString()), 8);
        QCOMPARE(cliOoms(QStringLiteral("expandable_segments:True")), 0);

        MainWindow window;
        show(window);
        openTrace(window, trace);
        auto* panel = window.experimentPanel();
        panel->memoryFractionBox()->setValue(0.03);
        setCompareList(panel, {QStringLiteral("expandable_segments:True")});
        QTest::mouseClick(panel->compareButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!window.comparePage()->isBusy(), kTimeout);
        const views::WhatIfAnswer& answer = window.comparePage()->answerView()->answer();
        QCOMPARE(answer.lines.size(), std::size_t{2});
        QCOMPARE(answer.lines.at(0).counts.ooms, 8ull);
        QCOMPARE(answer.lines.at(1).counts.ooms, 0ull);
        QCOMPARE(answer.lines.at(1).baseline.ooms, 8ull);  // against the recorded config at 0.03
        const QString text = window.comparePage()->answerView()->plainText();
        QVERIFY2(text.contains(QStringLiteral("none of its 8 OOMs")), qPrintable(text));
        QVERIFY(answer.conditions.contains(QStringLiteral("memory fraction 0.03")));
    }

    void aReadOnlySessionAsksOnceForACopy() {
        const QString original = dir_.filePath("readonly.allocscope");
        {
            storage::SessionWriter writer(original.toStdString());
            storage::importTraceFile(writer, tracePath("frag101__default.pickle").toStdString(), storage::ImportTarget{});
            writer.flush();
        }
        QVERIFY(QFile(original).setPermissions(QFileDevice::ReadOwner | QFileDevice::ReadGroup | QFileDevice::ReadOther));
        const QByteArray before = testfiles::sha256Of(original);
        MainWindow window;
        show(window);
        QVERIFY(window.openSessionFile(original));
        QTRY_COMPARE_WITH_TIMEOUT(window.runList()->model()->rowCount(), 1, kTimeout);
        QTRY_VERIFY_WITH_TIMEOUT(window.experimentPanel()->isRecordingChosen(), kTimeout);
        const QString copy = dir_.filePath("readonly-copy.allocscope");
        CopyDialogAnswerer answerer(copy);
        QSignalSpy finished(&window, &MainWindow::jobFinished);
        window.experimentPanel()->configEditor()->setText(QStringLiteral("expandable_segments:True"));
        window.runExperiment();
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, kTimeout);
        QCOMPARE(answerer.questions.size(), 1);
        QVERIFY(answerer.questions.front().contains(QStringLiteral("cannot be written")));
        QCOMPARE(window.currentFile(), QFileInfo(copy).absoluteFilePath());
        QTRY_COMPARE_WITH_TIMEOUT(window.runList()->model()->rowCount(), 2, kTimeout);
        QCOMPARE(testfiles::sha256Of(original), before);  // the original is left as it was
        QFile(original).setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    }

    void cancelStopsRunAndCompare() {
        MainWindow window;
        show(window);
        openTrace(window, tracePath("frag101__default.pickle"));
        auto* panel = window.experimentPanel();
        QStringList many;
        for (int mb = 100; mb < 130; ++mb) many << QStringLiteral("max_split_size_mb:%1").arg(mb);
        setCompareList(panel, many);
        window.compareExperiment();
        QVERIFY(window.comparePage()->isBusy());
        window.cancelJobs();
        QTRY_VERIFY_WITH_TIMEOUT(!window.comparePage()->isBusy(), kTimeout);
        QVERIFY2(window.comparePage()->lastMessage().contains(QStringLiteral("cancelled")), qPrintable(window.comparePage()->lastMessage()));
        QVERIFY(window.comparePage()->compareWidget()->data().runs.size() < 31);

        // Run, cancelled at once: nothing is left recording, and Run works again afterwards.
        QSignalSpy finished(&window, &MainWindow::jobFinished);
        window.runExperiment();
        window.cancelJobs();
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, kTimeout);
        window.runExperiment();
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 2, kTimeout);
        QCOMPARE(finished.at(1).at(0).toBool(), true);
        storage::SessionReader reader(window.currentFile().toStdString());
        for (const storage::RunRow& row : reader.runs()) QVERIFY(row.status != storage::RunStatus::Recording);
    }
};

QTEST_MAIN(TestWhatIfRecording)
#include "TestWhatIfRecording.moc"
