// `allocscope-cli oom` and the inferred limit in `replay`, `compare` and `recommend` (issue 35),
// on OOM recordings made on the simulated device under a known memory fraction: with no flags
// the replay is exact and says where its limit came from, `oom` answers the seed question on
// its first line and gives the same answer as JSON, explicit options override the inference,
// a trace without an OOM is bad input for `oom`, and the input file is never written.
#include <QCryptographicHash>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "../replay/OomRecording.h"
#include "InProcessCli.h"

namespace {

constexpr std::uint64_t kMiB = 1ull << 20;

QByteArray sha(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256);
}

QString firstLine(const std::string& text) { return QString::fromStdString(text.substr(0, text.find('\n'))); }

}  // namespace

class TestOomVerb : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    QString fraction_;  // 3 x (200 | 180 | 200) MiB then 256 MiB under fraction 0.023 of an H100
    std::uint64_t oomOp_ = 0;

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        fraction_ = dir_.filePath("fraction.pickle");
        const oomtest::Recording r = oomtest::record({}, "", {85'017'493'504ull, 552'402'944ull, 0.023}, fraction_.toStdString());
        QVERIFY(r.oomOp.has_value());
        oomOp_ = *r.oomOp;
    }

    void replayWithoutFlagsIsExact() {
        const QByteArray before = sha(fraction_);
        const clitest::CliResult r = clitest::runInProcess({"replay", fraction_.toStdString()});
        QCOMPARE(r.code, 0);
        const QString out = QString::fromStdString(r.out);
        QVERIFY2(out.contains("limit inferred from the OOM at op " + QString::number(oomOp_) + ": 1.82 GiB"), qPrintable(out));
        QVERIFY2(out.contains("between 1.70 GiB and 1.95 GiB"), qPrintable(out));
        QVERIFY2(out.contains("verdict: exact"), qPrintable(out));
        QVERIFY2(out.contains("OOMs 1"), qPrintable(out));
        // The default-GPU announcement is for a limit nobody inferred.
        QVERIFY2(!QString::fromStdString(r.err).contains("no --total-memory or --gpu given"), r.err.c_str());
        QCOMPARE(sha(fraction_), before);
    }

    // Explicit options override the inference, and say so; on the default 80 GB the OOM vanishes.
    void explicitOptionsOverride() {
        const clitest::CliResult r = clitest::runInProcess({"replay", fraction_.toStdString(), "--gpu", "h100-80gb"});
        QCOMPARE(r.code, 0);
        const QString out = QString::fromStdString(r.out);
        QVERIFY2(out.contains("limit: 78.66 GiB as given"), qPrintable(out));
        QVERIFY2(out.contains("the recorded OOM is not used to infer one"), qPrintable(out));
        QVERIFY2(!out.contains("verdict: exact"), qPrintable(out));
    }

    void oomAnswersTheSeedQuestionFirst() {
        const clitest::CliResult r = clitest::runInProcess({"oom", fraction_.toStdString()});
        QCOMPARE(r.code, 0);
        QVERIFY2(firstLine(r.out).startsWith("yes: expandable_segments:True would have avoided this OOM"), r.out.c_str());
        const QString out = QString::fromStdString(r.out);
        QVERIFY2(out.contains("OOM at op " + QString::number(oomOp_) + " (trace entry "), qPrintable(out));
        QVERIFY2(out.contains("256.00 MiB requested"), qPrintable(out));
        QVERIFY2(out.contains("limit inferred from the OOM at op"), qPrintable(out));
        QVERIFY2(out.contains("reserved 1.70 GiB, allocated 1.17 GiB, cached free 540.00 MiB; largest free block 180.00 MiB"),
                 qPrintable(out));
        QVERIFY2(out.contains(": fragmentation"), qPrintable(out));
        QVERIFY2(out.contains("held by 6 live blocks"), qPrintable(out));
        QVERIFY2(out.contains("train.py:14:activation"), qPrintable(out));
        QVERIFY2(out.contains("CUDA out of memory. Tried to allocate 256.00 MiB."), qPrintable(out));
        QVERIFY2(out.contains("no OOM at any limit in the interval"), qPrintable(out));
        QVERIFY2(out.contains("OOM at every limit in the interval"), qPrintable(out));
    }

    void oomJsonCarriesTheSameAnswer() {
        const clitest::CliResult r = clitest::runInProcess({"oom", fraction_.toStdString(), "--json"});
        QCOMPARE(r.code, 0);
        QJsonParseError error;
        const QJsonObject o = QJsonDocument::fromJson(QByteArray::fromStdString(r.out), &error).object();
        QCOMPARE(error.error, QJsonParseError::NoError);
        QVERIFY(o["headline"].toString().startsWith("yes: expandable_segments:True"));
        QCOMPARE(o["op"].toInteger(), qint64(oomOp_));
        QCOMPARE(o["requested"].toInteger(), qint64(256 * kMiB));
        const QJsonObject limit = o["limit"].toObject();
        QCOMPARE(limit["source"].toString(), QString("inferred"));
        QCOMPARE(limit["cause"].toString(), QString("memory_fraction"));
        QCOMPARE(limit["low"].toInteger(), qint64(1740 * kMiB));
        QCOMPARE(limit["high"].toInteger(), qint64(1996 * kMiB - 1));
        QCOMPARE(limit["memory_fraction"].toDouble(), 0.023);
        QVERIFY(o["fragmented"].toBool());
        QCOMPARE(o["holders"].toArray().size(), 6);
        const QJsonArray rows = o["what_if"].toArray();
        QVERIFY(rows.size() > 10);
        QVERIFY(rows[0].toObject()["recorded"].toBool());
        QVERIFY(rows[0].toObject()["oom"].toBool());
        bool sawExpandable = false;
        for (const QJsonValue& v : rows) {
            const QJsonObject row = v.toObject();
            if (row["config"].toString() != "expandable_segments:True") continue;
            sawExpandable = true;
            QVERIFY(!row["oom"].toBool());
            QVERIFY(row["oom_op"].isNull());
        }
        QVERIFY(sawExpandable);
    }

    void compareAndRecommendSayTheLimit() {
        for (const char* verb : {"compare", "recommend"}) {
            const clitest::CliResult r = clitest::runInProcess({verb, fraction_.toStdString()});
            QCOMPARE(r.code, 0);
            QVERIFY2(QString::fromStdString(r.out).contains("limit inferred from the OOM at op " + QString::number(oomOp_)),
                     r.out.c_str());
        }
    }

    void traceWithoutOomIsBadInput() {
        const QString none = dir_.filePath("none.pickle");
        // 3 x (200 | 180 | 200) + 256 MiB fit on the whole H100: no OOM recorded.
        const oomtest::Recording r = oomtest::record({}, "", {}, none.toStdString());
        QVERIFY(!r.oomOp);
        const clitest::CliResult o = clitest::runInProcess({"oom", none.toStdString()});
        QCOMPARE(o.code, 1);
        QVERIFY2(QString::fromStdString(o.err).startsWith("allocscope-cli: the recording has no out-of-memory error"), o.err.c_str());
        const clitest::CliResult replay = clitest::runInProcess({"replay", none.toStdString()});
        QCOMPARE(replay.code, 0);
        QVERIFY2(QString::fromStdString(replay.out).contains("no OOM recorded: the limit is at least 1.95 GiB"), replay.out.c_str());
    }

#if ALLOCSCOPE_HAVE_STORAGE
    // `import` infers the limit too (the OOM is stored with the run), and `oom --db S --run N`
    // answers from the session as from the file.
    void importAndAnswerFromTheSession() {
        const std::string session = dir_.filePath("oom.allocscope").toStdString();
        const clitest::CliResult imported = clitest::runInProcess({"import", fraction_.toStdString(), "--db", session});
        QCOMPARE(imported.code, 0);
        QVERIFY2(QString::fromStdString(imported.err).contains("run 1: limit inferred from the OOM at op"), imported.err.c_str());
        QVERIFY2(!QString::fromStdString(imported.err).contains("diverged"), imported.err.c_str());
        const clitest::CliResult fromFile = clitest::runInProcess({"oom", fraction_.toStdString()});
        const clitest::CliResult fromDb = clitest::runInProcess({"oom", "--db", session, "--run", "1"});
        QCOMPARE(fromDb.code, 0);
        QCOMPARE(firstLine(fromDb.out), firstLine(fromFile.out));
        QVERIFY2(QString::fromStdString(fromDb.out).contains(": fragmentation"), fromDb.out.c_str());
        QCOMPARE(clitest::runInProcess({"oom", "--db", session}).code, 2);
        QCOMPARE(clitest::runInProcess({"oom", "--db", session, "--run", "9"}).code, 1);
    }
#endif

    void usageErrors() {
        QCOMPARE(clitest::runInProcess({"oom"}).code, 2);
        QCOMPARE(clitest::runInProcess({"oom", fraction_.toStdString(), "--bogus"}).code, 2);
        QCOMPARE(clitest::runInProcess({"oom", fraction_.toStdString(), "--config", ""}).code, 2);
        const clitest::CliResult help = clitest::runInProcess({"help", "oom"});
        QCOMPARE(help.code, 0);
        QVERIFY(QString::fromStdString(help.out).contains("usage: allocscope-cli oom TRACE"));
    }
};

QTEST_GUILESS_MAIN(TestOomVerb)
#include "TestOomVerb.moc"
