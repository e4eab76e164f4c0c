// A session another process records into: SessionWatcher notices the commits (by stat, without
// touching the file), and the main window then lists the new runs by itself (and on File ▸
// Reload, F5) while keeping the selected run and event. The writer is a real allocscope-cli
// process, as in the cluster / several-terminals use this is for.
#include <QAction>
#include <QProcess>
#include <QSettings>
#include <QtTest>

#include "app/gui/MainWindow.h"
#include "app/gui/RunStateService.h"
#include "app/gui/SessionWatcher.h"
#include "tests/FileBytes.h"
#include "tests/app/SessionFixture.h"
#include "views/widgets/EventScrubber.h"
#include "views/widgets/RunListModel.h"
#include "views/widgets/RunListWidget.h"

using namespace allocscope;
using app::MainWindow;

namespace {

constexpr int kTimeout = 60000;

// Another process records one more run into `path`.
bool recordElsewhere(const QString& path) {
    QProcess cli;
    cli.start(qEnvironmentVariable("ALLOCSCOPE_CLI"), {"run", "fragmentation-101", "--seed", "7", "--db", path});
    return cli.waitForFinished(-1) && cli.exitStatus() == QProcess::NormalExit && cli.exitCode() == 0;
}

}  // namespace

class TestSessionWatcher : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

private slots:
    void initTestCase() {
        QCoreApplication::setOrganizationName("AllocScopeTest");
        QCoreApplication::setApplicationName("TestSessionWatcher");
        QSettings().clear();
        QVERIFY(dir_.isValid());
    }

    void noticesCommitsOfAnotherProcess() {
        const QString path = dir_.filePath("watched.allocscope");
        testing::recordFrag101(path, {""});
        app::SessionWatcher watcher;
        QSignalSpy changed(&watcher, &app::SessionWatcher::changed);
        watcher.watch(path);
        QVERIFY(!watcher.poll());  // nothing happened yet
        const QByteArray before = testfiles::sha256Of(path);
        QVERIFY(!watcher.poll());
        QCOMPARE(testfiles::sha256Of(path), before);  // looking writes nothing

        QVERIFY(recordElsewhere(path));
        QVERIFY(watcher.poll());
        QCOMPARE(changed.count(), 1);
        QVERIFY(!watcher.poll());  // once per change
        QCOMPARE(changed.count(), 1);

        watcher.watch(QString());
        QVERIFY(recordElsewhere(path));
        QVERIFY(!watcher.poll());  // stopped
        QCOMPARE(changed.count(), 1);
    }

    void windowListsNewRunsAndKeepsRunAndEvent() {
        const QString path = dir_.filePath("shared.allocscope");
        testing::recordFrag101(path, {"", "expandable_segments:True"});
        MainWindow window;
        window.resize(1280, 720);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(window.openSessionFile(path));
        QTRY_COMPARE_WITH_TIMEOUT(window.runList()->model()->rowCount(), 2, kTimeout);
        window.selectRun(2);
        QTRY_VERIFY_WITH_TIMEOUT(window.currentFrame().run == 2 && !window.currentFrame().approximate, kTimeout);
        window.goToEvent(100);
        QTRY_VERIFY_WITH_TIMEOUT(window.currentFrame().requested == 100 && !window.currentFrame().approximate, kTimeout);

        int overviews = 0;
        connect(window.stateService(), &app::RunStateService::overviewReady, this, [&overviews] { ++overviews; });
        QVERIFY(window.stateService()->readsWithoutLocks());  // opened while nobody wrote it

        // Automatically: the watcher's next look (the timer's, called here directly).
        QVERIFY(recordElsewhere(path));
        QVERIFY(window.sessionWatcher()->poll());
        QTRY_COMPARE_WITH_TIMEOUT(window.runList()->model()->rowCount(), 3, kTimeout);
        QCOMPARE(window.runList()->model()->runs().back().number, 3);
        QCOMPARE(window.runList()->selectedRun(), 2);
        // The shown run was read without locks: it is read again, at the same event.
        QTRY_VERIFY_WITH_TIMEOUT(overviews >= 1 && window.currentFrame().run == 2 && !window.currentFrame().approximate,
                                 kTimeout);
        QCOMPARE(window.currentFrame().requested, qint64{100});
        QCOMPARE(window.scrubber()->currentEvent(), qint64{100});

        // File ▸ Reload (F5) does the same on request.
        QAction* reload = nullptr;
        for (QAction* action : window.findChildren<QAction*>()) {
            if (action->shortcut() == QKeySequence(Qt::Key_F5)) reload = action;
        }
        QVERIFY(reload != nullptr);
        QCOMPARE(reload->text().remove(QLatin1Char('&')), QStringLiteral("Reload"));
        QVERIFY(recordElsewhere(path));
        reload->trigger();
        QTRY_COMPARE_WITH_TIMEOUT(window.runList()->model()->rowCount(), 4, kTimeout);
        QTRY_VERIFY_WITH_TIMEOUT(overviews >= 2 && window.currentFrame().run == 2 && !window.currentFrame().approximate,
                                 kTimeout);
        QCOMPARE(window.runList()->selectedRun(), 2);
        QCOMPARE(window.scrubber()->currentEvent(), qint64{100});
    }
};

QTEST_MAIN(TestSessionWatcher)
#include "TestSessionWatcher.moc"
