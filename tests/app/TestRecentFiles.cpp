// File ▸ Open Recent without a window: the list's rules (newest first, absolute, no duplicates,
// at most 10, remembered in QSettings) and the menu that shows it.
#include <QAction>
#include <QDir>
#include <QMenu>
#include <QSettings>
#include <QtTest>

#include "app/gui/RecentFiles.h"

using allocscope::app::RecentFiles;

class TestRecentFiles : public QObject {
    Q_OBJECT
private:
    static QStringList actionTexts(const QMenu& menu) {
        QStringList texts;
        for (QAction* a : menu.actions()) texts << a->text();
        return texts;
    }

private slots:
    void initTestCase() {
        QCoreApplication::setOrganizationName("AllocScopeTest");
        QCoreApplication::setApplicationName("TestRecentFiles");
    }
    void init() { QSettings().clear(); }

    void emptyListDisablesTheMenu() {
        QMenu menu;
        RecentFiles recent(&menu, [](const QString&) {});
        QVERIFY(recent.files().isEmpty());
        QVERIFY(menu.actions().isEmpty());
        QVERIFY(!menu.isEnabled());
    }

    void newestFirstAbsoluteWithoutDuplicates() {
        QMenu menu;
        RecentFiles recent(&menu, [](const QString&) {});
        recent.add(QStringLiteral("a.allocscope"));
        recent.add(QStringLiteral("b.allocscope"));
        recent.add(QStringLiteral("./a.allocscope"));  // the same file again: moves to the front
        const QString a = QDir::current().absoluteFilePath(QStringLiteral("a.allocscope"));
        const QString b = QDir::current().absoluteFilePath(QStringLiteral("b.allocscope"));
        QCOMPARE(recent.files(), QStringList({a, b}));
        QCOMPARE(QSettings().value("recentFiles").toStringList(), QStringList({a, b}));
        QVERIFY(menu.isEnabled());
        QCOMPARE(actionTexts(menu), QStringList({"&1 a.allocscope", "&2 b.allocscope"}));
        QCOMPARE(menu.actions().at(1)->toolTip(), b);
    }

    void keepsTheTenNewest() {
        QMenu menu;
        RecentFiles recent(&menu, [](const QString&) {});
        for (int i = 1; i <= 12; ++i) recent.add(QStringLiteral("s%1.allocscope").arg(i));
        const QStringList files = recent.files();
        QCOMPARE(files.size(), 10);
        QVERIFY(files.first().endsWith(QStringLiteral("/s12.allocscope")));
        QVERIFY(files.last().endsWith(QStringLiteral("/s3.allocscope")));
        QCOMPARE(menu.actions().size(), 10);
    }

    void rememberedAcrossInstances() {
        QMenu first;
        RecentFiles(&first, [](const QString&) {}).add(QStringLiteral("kept.allocscope"));
        QMenu second;
        RecentFiles recent(&second, [](const QString&) {});
        QCOMPARE(actionTexts(second), QStringList({"&1 kept.allocscope"}));
    }

    void choosingAnEntryOpensIt() {
        QMenu menu;
        QStringList opened;
        RecentFiles* recentPtr = nullptr;
        // Opening adds the file again, as the window does: the menu is rebuilt from inside the
        // triggered action's own handler.
        RecentFiles recent(&menu, [&](const QString& path) {
            opened << path;
            recentPtr->add(path);
        });
        recentPtr = &recent;
        recent.add(QStringLiteral("x.allocscope"));
        recent.add(QStringLiteral("y.allocscope"));
        menu.actions().at(1)->trigger();
        QCOMPARE(opened, QStringList({QDir::current().absoluteFilePath(QStringLiteral("x.allocscope"))}));
        QCOMPARE(actionTexts(menu), QStringList({"&1 x.allocscope", "&2 y.allocscope"}));
    }
};

QTEST_MAIN(TestRecentFiles)
#include "TestRecentFiles.moc"
