#include <QtTest>
#include <QMenuBar>
#include <QSettings>
#include <QTemporaryDir>

#include "app/MainWindow.h"

using allocscope::app::MainWindow;

class TestMainWindow : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QCoreApplication::setOrganizationName("AllocScopeTest");
        QCoreApplication::setApplicationName("TestMainWindow");
        QSettings().clear();
    }
    void hasFileAndHelpMenus() {
        MainWindow window;
        QStringList titles;
        for (QAction* action : window.menuBar()->actions()) titles << action->text().remove('&');
        QCOMPARE(titles, QStringList({"File", "Help"}));
        const QMenu* file = window.menuBar()->actions().first()->menu();
        QStringList items;
        for (QAction* action : file->actions()) {
            if (!action->isSeparator()) items << action->text().remove('&');
        }
        QCOMPARE(items, QStringList({"Open…", "Open Recent", "Quit"}));
    }
    void geometryIsRemembered() {
        {
            MainWindow window;
            window.resize(900, 600);
            window.show();
            QVERIFY(QTest::qWaitForWindowExposed(&window));
            window.close();
        }
        MainWindow again;
        QCOMPARE(again.size(), QSize(900, 600));
    }
    void openingAFileAddsItToRecent() {
        QTemporaryDir dir;
        const QString path = dir.filePath("session.allocscope");
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("x");
        file.close();
        MainWindow window;
        QVERIFY(window.openFile(path));
        QCOMPARE(window.recentFiles().value(0), QFileInfo(path).absoluteFilePath());
        QVERIFY(window.windowTitle().startsWith("session.allocscope"));
    }
};

QTEST_MAIN(TestMainWindow)
#include "TestMainWindow.moc"
