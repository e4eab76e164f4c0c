#include <QtTest>
#include <sstream>

#include "app/cli/VerbRegistry.h"

using allocscope::cli::runCli;

class TestCliRegistry : public QObject {
    Q_OBJECT
private slots:
    void helpListsRegisteredVerbs() {
        std::ostringstream out, err;
        QCOMPARE(runCli({"allocscope-cli", "help"}, out, err), 0);
        QVERIFY(out.str().find("gpus") != std::string::npos);
    }
    void noVerbIsAUsageError() {
        std::ostringstream out, err;
        QCOMPARE(runCli({"allocscope-cli"}, out, err), 2);
        QVERIFY(err.str().find("usage") != std::string::npos);
    }
    void unknownVerbIsAUsageError() {
        std::ostringstream out, err;
        QCOMPARE(runCli({"allocscope-cli", "frobnicate"}, out, err), 2);
        QVERIFY(err.str().find("unknown verb 'frobnicate'") != std::string::npos);
    }
    void gpusListsThePresets() {
        std::ostringstream out, err;
        QCOMPARE(runCli({"allocscope-cli", "gpus"}, out, err), 0);
        QVERIFY(out.str().find("h100-80gb\t85017493504") != std::string::npos);
        QVERIFY(out.str().find("24gb") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestCliRegistry)
#include "TestCliRegistry.moc"
