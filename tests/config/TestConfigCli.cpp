// `allocscope-cli config STR [--json]`: exit codes, the text report (verdict, PyTorch's message,
// caret under the offending token) and the JSON object.
#include <QtTest>

#include <QProcess>
#include <sstream>

#include "app/cli/VerbRegistry.h"

namespace {

struct Run {
    int code;
    QString out;
    QString err;
};

Run cli(const std::vector<std::string>& args) {
    std::vector<std::string> argv{"allocscope-cli", "config"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::ostringstream out;
    std::ostringstream err;
    const int code = allocscope::cli::runCli(argv, out, err);
    return {code, QString::fromStdString(out.str()), QString::fromStdString(err.str())};
}

}  // namespace

class TestConfigCli : public QObject {
    Q_OBJECT

private slots:
    void exitCodes_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("code");
        QTest::newRow("accepted") << QStringList{"max_split_size_mb:128"} << 0;
        QTest::newRow("accepted with warnings") << QStringList{"max_split_size_mb,128"} << 0;
        QTest::newRow("empty string is the default config") << QStringList{""} << 0;
        QTest::newRow("value error") << QStringList{"max_split_size_mb:19"} << 1;
        QTest::newRow("runtime error") << QStringList{"max_split_size_mb:abc"} << 1;
        QTest::newRow("abort at import") << QStringList{"max_split_size_mb=128"} << 1;
        QTest::newRow("json accepted") << QStringList{"--json", "expandable_segments:True"} << 0;
        QTest::newRow("json rejected") << QStringList{"foo:1", "--json"} << 1;
        QTest::newRow("no string") << QStringList{} << 2;
        QTest::newRow("only --json") << QStringList{"--json"} << 2;
        QTest::newRow("unknown option") << QStringList{"--yaml", "max_split_size_mb:128"} << 2;
        QTest::newRow("two strings") << QStringList{"max_split_size_mb:128", "expandable_segments:True"} << 2;
        QTest::newRow("-- then a string") << QStringList{"--", "--json"} << 1;
    }

    void exitCodes() {
        QFETCH(QStringList, args);
        QFETCH(int, code);
        std::vector<std::string> a;
        for (const QString& s : args) a.push_back(s.toStdString());
        const Run r = cli(a);
        QCOMPARE(r.code, code);
        if (code == 2) {
            QVERIFY(r.out.isEmpty());
            QVERIFY(r.err.contains("config"));
        }
    }

    void textReport() {
        const Run ok = cli({" max_split_size_mb , 128 "});
        QVERIFY(ok.out.contains("canonical:  max_split_size_mb:128\n"));
        QVERIFY(ok.out.contains("pytorch:    accepted"));
        QVERIFY(ok.out.contains("warning[separator]"));

        const Run bad = cli({"expandable_segments:true"});
        QVERIFY(bad.out.contains("ValueError"));
        QVERIFY(bad.out.contains("Expected 'True' or 'False' at index 2 in ConfigTokenizer but got 'true'"));
        QVERIFY(bad.out.contains("corrected:  expandable_segments:True"));
        // The caret line sits under 'true' (4 columns, after 4 spaces of indent and 20 characters).
        QVERIFY2(bad.out.contains("\n    expandable_segments:true\n" + QString(24, ' ') + "^^^^\n"), qPrintable(bad.out));

        const Run abort = cli({"max_split_size_mb:128;garbage_interval:5"});
        QVERIFY(abort.out.contains("`import torch` aborts"));
        QVERIFY(abort.out.contains("Index out of bounds in ConfigTokenizer"));
        QVERIFY(abort.out.contains("garbage_collection_threshold"));  // the suggestion for garbage_interval
        QVERIFY(abort.out.contains("note[semicolon-separator]"));
    }

    // Multi-byte characters before the offending token count as one column each.
    void caretWithUtf8() {
        const Run r = cli({"\xC3\xA9t\xC3\xA9:1"});  // "été:1"
        QCOMPARE(r.code, 1);
        QVERIFY2(r.out.contains("\n    \xC3\xA9t\xC3\xA9:1\n    ^^^\n"), qPrintable(r.out));
        const Run tab = cli({"max_split_size_mb:\t19"});
        QVERIFY2(tab.out.contains("\n    max_split_size_mb: 19\n" + QString(23, ' ') + "^^\n"), qPrintable(tab.out));
    }

    void json() {
        const Run r = cli({"--json", "max_split_size_mb:128;garbage_interval:5"});
        QCOMPARE(r.code, 1);
        QJsonParseError error{};
        const QJsonDocument doc = QJsonDocument::fromJson(r.out.toUtf8(), &error);
        QCOMPARE(error.error, QJsonParseError::NoError);
        const QJsonObject o = doc.object();
        QCOMPARE(o["verdict"].toString(), QString("abort-at-import"));
        QCOMPARE(o["accepted"].toBool(true), false);
        QVERIFY(o["canonical"].isNull());
        QVERIFY(o["pytorch_message"].toString().startsWith("terminate called after throwing an instance of 'c10::Error'\n"));
        QCOMPARE(o["corrected"].toString(), QString("max_split_size_mb:128"));
        const QJsonArray diags = o["diagnostics"].toArray();
        QVERIFY(!diags.isEmpty());
        const QJsonObject first = diags.first().toObject();
        QCOMPARE(first["severity"].toString(), QString("error"));
        QCOMPARE(first["code"].toString(), QString("missing-value"));
        QCOMPARE(first["token"].toString(), QString("5"));
        QCOMPARE(first["offset"].toInt(), 39);
        QCOMPARE(first["length"].toInt(), 1);
        bool sawSuggestion = false;
        for (const QJsonValue& v : diags) {
            sawSuggestion |= v.toObject()["suggestion"].toString() == "garbage_collection_threshold";
        }
        QVERIFY(sawSuggestion);

        const Run ok = cli({"--json", "expandable_segments:True,max_split_size_mb:256"});
        const QJsonObject a = QJsonDocument::fromJson(ok.out.toUtf8()).object();
        QCOMPARE(a["verdict"].toString(), QString("accepted"));
        QCOMPARE(a["canonical"].toString(), QString("max_split_size_mb:256,expandable_segments:True"));
        QCOMPARE(a["pytorch_message"].toString(), QString());
        QVERIFY(a["diagnostics"].toArray().isEmpty());
    }

    // Control characters, DEL and quotes survive JSON escaping.
    void jsonEscaping() {
        const Run r = cli({"--json", "fo\"o\\\x01\x7f:1"});
        QJsonParseError error{};
        const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8(), &error).object();
        QCOMPARE(error.error, QJsonParseError::NoError);
        QCOMPARE(o["input"].toString(), QString("fo\"o\\\x01\x7f:1"));
        QCOMPARE(o["pytorch_message"].toString(), QString("Unrecognized key 'fo\"o\\\x01\x7f' in CUDA allocator config."));
    }

    // The built binary, as a shell would run it: exit status and stdout/stderr split.
    void realProcess() {
        const QString exe = qEnvironmentVariable("ALLOCSCOPE_CLI");
        if (exe.isEmpty() || !QFileInfo::exists(exe)) QSKIP("ALLOCSCOPE_CLI not built");
        struct Case {
            QStringList args;
            int code;
        };
        for (const Case& c : {Case{{"config", "max_split_size_mb:128"}, 0}, Case{{"config", "max_split_size_mb=128"}, 1},
                              Case{{"config"}, 2}, Case{{"config", "--nope", "x"}, 2}}) {
            QProcess p;
            p.start(exe, c.args);
            QVERIFY(p.waitForFinished(30000));
            QCOMPARE(p.exitStatus(), QProcess::NormalExit);
            QCOMPARE(p.exitCode(), c.code);
            if (c.code == 2) {
                QVERIFY(p.readAllStandardOutput().isEmpty());
                QVERIFY(!p.readAllStandardError().isEmpty());
            }
        }
    }

    void helpListsTheVerb() {
        std::ostringstream out, err;
        QCOMPARE(allocscope::cli::runCli({"allocscope-cli", "help", "config"}, out, err), 0);
        QVERIFY(QString::fromStdString(out.str()).contains("--json"));
    }
};

QTEST_GUILESS_MAIN(TestConfigCli)
#include "TestConfigCli.moc"
