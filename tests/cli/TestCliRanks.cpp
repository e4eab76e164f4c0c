// `allocscope-cli import FILE... --db S --jobs N` and `allocscope-cli ranks --db S [--json]`:
// several files into one session in the order given, a bad file named while the others land
// (exit 1), and the ranks table with its median and outliers.
#include <QtTest>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <filesystem>
#include <string>

#include "InProcessCli.h"

using clitest::CliResult;
using clitest::runInProcess;
namespace fs = std::filesystem;

namespace {

std::string replayTrace(const std::string& name) {
    return qgetenv("ALLOCSCOPE_TEST_DATA").toStdString() + "/replay/" + name + ".pickle";
}

std::string copyAs(const QTemporaryDir& dir, const std::string& source, const std::string& name) {
    const std::string to = dir.filePath(QString::fromStdString(name)).toStdString();
    fs::copy_file(replayTrace(source), to);
    return to;
}

}  // namespace

class TestCliRanks : public QObject {
    Q_OBJECT
private slots:
    void importManyThenRanks() {
        QTemporaryDir dir;
        const std::string db = dir.filePath("job.allocscope").toStdString();
        const std::string bad = dir.filePath("rank9.pickle").toStdString();
        {
            std::FILE* f = std::fopen(bad.c_str(), "wb");
            std::fputs("junk", f);
            std::fclose(f);
        }
        const CliResult imported = runInProcess({"import", copyAs(dir, "repeated_empty_cache", "rank2.pickle"),
                                                 copyAs(dir, "repeated_empty_cache", "rank0.pickle"), bad,
                                                 copyAs(dir, "gc_fraction", "rank1.pickle"),
                                                 copyAs(dir, "oom_ending", "rank3.pickle"), "--db", db, "--jobs", "2",
                                                 "--memory-fraction", "0.001"});
        QCOMPARE(imported.code, 1);  // a file was refused; the others landed
        QCOMPARE(imported.out, std::string("run 1: rank2.pickle (rank 2 from its file name)\n"
                                           "run 2: rank0.pickle (rank 0 from its file name)\n"
                                           "run 3: rank1.pickle (rank 1 from its file name)\n"
                                           "run 4: rank3.pickle (rank 3 from its file name)\n"));
        QVERIFY2(imported.err.find("allocscope-cli: not a PyTorch memory snapshot") != std::string::npos, imported.err.c_str());
        QVERIFY2(imported.err.find("rank9.pickle") != std::string::npos, imported.err.c_str());

        const CliResult json = runInProcess({"ranks", "--db", db, "--json"});
        QCOMPARE(json.code, 0);
        const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(json.out));
        QVERIFY2(doc.isObject(), json.out.c_str());
        const QJsonObject root = doc.object();
        QCOMPARE(root.value("median_peak_reserved").toInteger(), qint64{32} << 20);
        const QJsonArray rows = root.value("runs").toArray();
        QCOMPARE(rows.size(), 4);
        for (int i = 0; i < rows.size(); ++i) {
            const QJsonObject row = rows[i].toObject();
            QCOMPARE(row.value("rank").toInt(), i);  // ordered by rank
            QCOMPARE(row.value("outlier_oom").toBool(), i == 3);
            QCOMPARE(row.value("outlier_reserved").toBool(), i == 1 || i == 3);
            QCOMPARE(row.value("rank_source").toString(), QString("file name"));
        }
        QCOMPARE(rows[2].toObject().value("run").toInt(), 1);

        // info names each run's rank too.
        const CliResult info = runInProcess({"info", db});
        QVERIFY2(info.out.find("run 3: rank1.pickle [complete]") != std::string::npos &&
                     info.out.find("  rank: 1 (from its file name)\n") != std::string::npos,
                 info.out.c_str());

        const CliResult text = runInProcess({"ranks", "--db", db, "--threshold", "100"});
        QCOMPARE(text.code, 0);
        QVERIFY2(text.out.find("rank3.pickle [OOM]") != std::string::npos, text.out.c_str());
        QVERIFY2(text.out.find("rank1.pickle\n") != std::string::npos, text.out.c_str());  // +94% is under 100%
        QVERIFY2(text.out.find("more than 100.0% above the median") != std::string::npos, text.out.c_str());
    }

    void usageAndBadSession() {
        QTemporaryDir dir;
        const std::string db = dir.filePath("x.allocscope").toStdString();
        QCOMPARE(runInProcess({"import", replayTrace("oom_ending"), "--db", db, "--jobs", "0"}).code, 2);
        QCOMPARE(runInProcess({"ranks"}).code, 2);
        QCOMPARE(runInProcess({"ranks", "--db", db, "--threshold", "ten"}).code, 2);
        const CliResult missing = runInProcess({"ranks", "--db", db});
        QCOMPARE(missing.code, 1);
        QVERIFY(!fs::exists(db));
        // One bad file only: nothing to record, so no session is created.
        const std::string junk = dir.filePath("junk.pickle").toStdString();
        { std::FILE* f = std::fopen(junk.c_str(), "wb"); std::fputs("junk", f); std::fclose(f); }
        QCOMPARE(runInProcess({"import", junk, "--db", db}).code, 1);
        QVERIFY(!fs::exists(db));
    }
};

QTEST_GUILESS_MAIN(TestCliRanks)
#include "TestCliRanks.moc"
