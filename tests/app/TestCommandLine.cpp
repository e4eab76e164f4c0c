#include <QtTest>

#include "app/CommandLine.h"

using allocscope::app::parseCommandLine;

class TestCommandLine : public QObject {
    Q_OBJECT
private slots:
    void noArgumentsOpensNothing() {
        const auto options = parseCommandLine({"allocscope"});
        QVERIFY(options.error.isEmpty());
        QVERIFY(options.files.isEmpty());
        QVERIFY(!options.showHelp);
    }
    void filesArePositional() {
        const auto options = parseCommandLine({"allocscope", "a.allocscope", "trace.pickle"});
        QVERIFY(options.error.isEmpty());
        QCOMPARE(options.files, QStringList({"a.allocscope", "trace.pickle"}));
    }
    void helpAndVersion() {
        const auto help = parseCommandLine({"allocscope", "--help"});
        QVERIFY(help.showHelp);
        QVERIFY(help.helpText.contains("FILE"));
        QVERIFY(parseCommandLine({"allocscope", "-v"}).showVersion);
    }
    void unknownOptionIsAnError() {
        const auto options = parseCommandLine({"allocscope", "--frobnicate"});
        QVERIFY(!options.error.isEmpty());
        QVERIFY(options.error.contains("frobnicate"));
    }
};

QTEST_GUILESS_MAIN(TestCommandLine)
#include "TestCommandLine.moc"
