// The main window on a snapshot whose recorded history starts mid-run (a PyTorch ring buffer that
// overflowed), imported the way the app imports: the run list marks the run "history starts
// mid-run" (name and tooltip), and its timeline starts where the history starts, not with the
// events that rebuilt the state it started in.
#include <QSettings>
#include <QtTest>

#include "app/gui/MainWindow.h"
#include "storage/session/ProgramRecording.h"
#include "storage/session/SessionReader.h"
#include "storage/session/SessionWriter.h"
#include "views/charts/TimelineChartView.h"
#include "views/widgets/RunListModel.h"
#include "views/widgets/RunListWidget.h"

using namespace allocscope;
using app::MainWindow;

namespace {
constexpr int kTimeout = 60000;
}  // namespace

class TestMainWindowHistory : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString session_;

private slots:
    void initTestCase() {
        QCoreApplication::setOrganizationName("AllocScopeTest");
        QCoreApplication::setApplicationName("TestMainWindowHistory");
        QSettings().clear();
        QVERIFY(dir_.isValid());
        session_ = dir_.filePath("ringbuf.allocscope");
        storage::SessionWriter writer(session_.toStdString());
        storage::ImportTarget target;
        target.totalMemory = 85'017'493'504ull;  // the recording's H100
        const std::string pickle = qEnvironmentVariable("ALLOCSCOPE_TEST_DATA").toStdString() + "/pools/ringbuf_train__default.pickle";
        const auto runs = storage::importTraceFile(writer, pickle, target);
        QCOMPARE(runs.size(), std::size_t{1});
        QCOMPARE(QString::fromStdString(runs.front().divergence), QString());
    }

    void runIsMarkedAndTimelineStartsWithTheHistory() {
        const std::optional<storage::HistoryStart> start = storage::SessionReader(session_.toStdString()).run(1).historyStart;
        QVERIFY(start.has_value());
        MainWindow window;
        window.resize(1280, 720);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(window.openSessionFile(session_));
        QTRY_COMPARE_WITH_TIMEOUT(window.runList()->model()->rowCount(), 1, kTimeout);
        QTRY_VERIFY_WITH_TIMEOUT(window.currentFrame().run == 1 && !window.currentFrame().approximate, kTimeout);

        const views::RunListModel* model = window.runList()->model();
        const QModelIndex name = model->index(0, views::RunListModel::NameColumn);
        QVERIFY2(model->data(name, Qt::DisplayRole).toString().endsWith("(history starts mid-run)"),
                 qPrintable(model->data(name, Qt::DisplayRole).toString()));
        QVERIFY(model->data(name, Qt::ToolTipRole).toString().contains("History starts mid-run: "));

        window.showView("timeline");
        QTRY_VERIFY_WITH_TIMEOUT(!window.timeline()->data().buckets.empty(), kTimeout);
        QCOMPARE(window.timeline()->data().buckets.front().firstEvent, static_cast<qint64>(start->firstSeq));
        // The run opened at its peak reserved memory: the restored segments are already there.
        QVERIFY(window.currentFrame().shown >= static_cast<qint64>(start->firstSeq));
    }
};

QTEST_MAIN(TestMainWindowHistory)
#include "TestMainWindowHistory.moc"
