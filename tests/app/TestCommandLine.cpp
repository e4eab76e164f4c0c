#include <QtTest>

#include "app/gui/CommandLine.h"

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
    void whereToStart() {
        const auto options = parseCommandLine({"allocscope", "s.allocscope", "--run", "2", "--event", "40", "--view", "Heatmap",
                                               "--block", "0x7f0000200000", "--theme", "dark", "--screenshot", "out.png"});
        QVERIFY2(options.error.isEmpty(), qPrintable(options.error));
        QCOMPARE(options.run, 2);
        QCOMPARE(options.event, qint64{40});
        QCOMPARE(options.view, QString("heatmap"));
        QCOMPARE(options.block, quint64{0x7f0000200000});
        QCOMPARE(options.theme, QString("dark"));
        QCOMPARE(options.screenshot, QString("out.png"));
    }
    void badStartValuesSayWhat() {
        QVERIFY(parseCommandLine({"allocscope", "--run", "0"}).error.contains("--run"));
        QVERIFY(parseCommandLine({"allocscope", "--event", "-3"}).error.contains("--event"));
        QVERIFY(parseCommandLine({"allocscope", "--view", "charts"}).error.contains("charts"));
        QVERIFY(parseCommandLine({"allocscope", "--block", "xyz"}).error.contains("xyz"));
        QVERIFY(parseCommandLine({"allocscope", "--theme", "pink"}).error.contains("pink"));
        QVERIFY(parseCommandLine({"allocscope", "--memory-fraction", "1.5"}).error.contains("--memory-fraction"));
        QVERIFY(parseCommandLine({"allocscope", "--then", "dance"}).error.contains("dance"));
    }
    void whatToRunNext() {
        const auto options = parseCommandLine({"allocscope", "kv.pickle", "--config", "expandable_segments:True", "--memory-fraction",
                                               "0.03", "--then", "Compare"});
        QVERIFY2(options.error.isEmpty(), qPrintable(options.error));
        QCOMPARE(options.config, QString("expandable_segments:True"));
        QCOMPARE(options.memoryFraction, 0.03);
        QCOMPARE(options.action, QString("compare"));
        // An empty --config is PyTorch's defaults, not "unchanged".
        const auto defaults = parseCommandLine({"allocscope", "--config", ""});
        QVERIFY(!defaults.config.isNull() && defaults.config.isEmpty());
        QVERIFY(parseCommandLine({"allocscope"}).config.isNull());
    }
};

QTEST_GUILESS_MAIN(TestCommandLine)
#include "TestCommandLine.moc"
