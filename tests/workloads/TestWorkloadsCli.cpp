// The workload verbs of allocscope-cli: workloads, run, compare, recommend (exit codes, error
// format, byte-identical event CSVs, tables and JSON).
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include <sstream>

#include "app/cli/VerbRegistry.h"
#include "tests/cli/InProcessCli.h"

namespace {
using clitest::CliResult;
using clitest::runInProcess;
}  // namespace

class TestWorkloadsCli : public QObject {
    Q_OBJECT
private slots:
    void workloadsListsAllInTextAndJson() {
        const CliResult text = runInProcess({"workloads"});
        QCOMPARE(text.code, 0);
        QVERIFY(text.out.find("fragmentation-101") != std::string::npos);
        const CliResult json = runInProcess({"workloads", "--json"});
        QCOMPARE(json.code, 0);
        const QJsonArray all = QJsonDocument::fromJson(QByteArray::fromStdString(json.out)).array();
        QVERIFY(all.size() >= 9);
        for (const auto& v : all) {
            const QJsonObject w = v.toObject();
            QVERIFY(!w.value("name").toString().isEmpty());
            QVERIFY(!w.value("params").toArray().isEmpty());
        }
        QCOMPARE(runInProcess({"workloads", "--bogus"}).code, 2);
    }

    void runEventsCsvIsByteIdenticalPerSeed() {
        const std::vector<std::string> base = {"run", "random-mix", "--param", "events=3000", "--events-csv", "-"};
        auto withSeed = [&](const char* seed) {
            auto a = base;
            a.push_back("--seed");
            a.push_back(seed);
            return runInProcess(a);
        };
        const CliResult a = withSeed("4"), b = withSeed("4"), c = withSeed("5");
        QCOMPARE(a.code, 0);
        QVERIFY(a.out.rfind("seq,op,action,address,size,rounded_size,stream,segment,pool,cause,stack\n", 0) == 0);
        QVERIFY(a.out.size() > 3000 * 20);
        QVERIFY(a.out == b.out);
        QVERIFY(a.out != c.out);
        QVERIFY(a.err.find("peak reserved") != std::string::npos);  // the report went to stderr
    }

    void everyWorkloadsEventsCsvIsReproducible() {
        const std::vector<std::vector<std::string>> runs = {
            {"fragmentation-101"},
            {"oom-with-free-memory"},
            {"llm-training", "--param", "layers=1", "--param", "steps=2", "--param", "vocab=500"},
            {"llm-inference-varlen", "--param", "requests=3", "--param", "layers=2", "--param", "max_new_tokens=40"},
            {"model-load", "--param", "billions=0.3", "--param", "layers=4"},
            {"multi-model-sharing", "--param", "turns=4"},
            {"multi-stream", "--param", "iterations=20"},
            {"random-mix", "--param", "events=2000"},
            {"cuda-graphs", "--param", "replays=2"},
        };
        for (const auto& r : runs) {
            std::vector<std::string> args = {"run"};
            args.insert(args.end(), r.begin(), r.end());
            args.insert(args.end(), {"--seed", "11", "--events-csv", "-"});
            const CliResult a = runInProcess(args), b = runInProcess(args);
            QCOMPARE(a.code, 0);
            QVERIFY2(a.out.size() > 200, r.front().c_str());
            QVERIFY2(a.out == b.out, r.front().c_str());
        }
    }

    void runThatOomsIsAResult() {
        const CliResult r = runInProcess({"run", "oom-with-free-memory"});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.find("Tried to allocate 256.00 MiB") != std::string::npos);
        const CliResult e = runInProcess({"run", "oom-with-free-memory", "--config", "expandable_segments:True"});
        QCOMPARE(e.code, 0);
        QVERIFY(e.out.find("OOM") == std::string::npos);
    }

    void badInputExitsOneWithWhatAndWhere() {
        const CliResult p = runInProcess({"run", "fragmentation-101", "--param", "tensors=-3"});
        QCOMPARE(p.code, 1);
        QCOMPARE(QString::fromStdString(p.err).trimmed(),
                 QString("allocscope-cli: parameter 'tensors' must be between 1 and 100000, got -3 (tensors=-3)"));
        const CliResult w = runInProcess({"compare", "fragmentation-10"});
        QCOMPARE(w.code, 1);
        QVERIFY(w.err.rfind("allocscope-cli: unknown workload 'fragmentation-10'", 0) == 0);
        const CliResult c = runInProcess({"compare", "fragmentation-101", "--config", "max_split_size_mb:19"});
        QCOMPARE(c.code, 1);
        QVERIFY(c.err.find("(--config 'max_split_size_mb:19')") != std::string::npos);
        QCOMPARE(runInProcess({"run", "fragmentation-101", "--seed", "x"}).code, 1);
        QCOMPARE(runInProcess({"run", "fragmentation-101", "--gpu", "nope"}).code, 1);
    }

    void usageErrorsExitTwo() {
        QCOMPARE(runInProcess({"run"}).code, 2);
        QCOMPARE(runInProcess({"run", "fragmentation-101", "--param"}).code, 2);
        QCOMPARE(runInProcess({"compare", "fragmentation-101", "--frobnicate"}).code, 2);
        QCOMPARE(runInProcess({"recommend"}).code, 2);
        QCOMPARE(runInProcess({"run", "a", "b"}).code, 2);
    }

    void compareDefaultsToTheFiveConfigs() {
        const CliResult t = runInProcess({"compare", "fragmentation-101"});
        QCOMPARE(t.code, 0);
        for (const char* c : {"default", "expandable_segments:True", "max_split_size_mb:128",
                              "garbage_collection_threshold:0.6,max_split_size_mb:256", "backend:cudaMallocAsync"}) {
            QVERIFY2(t.out.find(std::string("\n") + c + " ") != std::string::npos, c);
        }
        QVERIFY(t.out.find("1194.0") != std::string::npos);
        const CliResult j = runInProcess({"compare", "oom-with-free-memory", "--config", "", "--config", "expandable_segments:True", "--json"});
        QCOMPARE(j.code, 0);
        const QJsonObject doc = QJsonDocument::fromJson(QByteArray::fromStdString(j.out)).object();
        const QJsonArray runs = doc.value("runs").toArray();
        QCOMPARE(runs.size(), 2);
        QCOMPARE(runs[0].toObject().value("ooms").toArray().size(), 1);
        QCOMPARE(runs[1].toObject().value("ooms").toArray().size(), 0);
        QCOMPARE(doc.value("device").toObject().value("name").toString(), QString("24gb"));
    }

    void compareAndRecommendAcceptATrace() {
        const std::string trace = qEnvironmentVariable("ALLOCSCOPE_TEST_DATA").toStdString() + "/traces/frag101__default.pickle";
        const CliResult c = runInProcess({"compare", trace, "--config", "", "--config", "expandable_segments:True"});
        QCOMPARE(c.code, 0);
        QVERIFY2(c.out.find("1194.0") != std::string::npos, c.out.c_str());  // frag101's recorded peak reserved
        QVERIFY(c.out.find("1162.0") != std::string::npos);                  // and under expandable segments
        QCOMPARE(runInProcess({"compare", trace, "--param", "x=1"}).code, 2);
        const CliResult missing = runInProcess({"compare", "/no/such/trace.pickle"});
        QCOMPARE(missing.code, 1);
        QVERIFY(missing.err.find("(/no/such/trace.pickle)") != std::string::npos);
        const CliResult r = runInProcess({"recommend", trace, "--no-gpu-search"});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.find("recommended:") != std::string::npos);
    }

    void recommendNamesAConfig() {
        const CliResult r = runInProcess({"recommend", "fragmentation-101", "--no-gpu-search", "--config", "max_split_size_mb:64"});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.find("recommended:") != std::string::npos);
        QVERIFY(r.out.find("margin") != std::string::npos);
        QVERIFY(r.out.find("\nmax_split_size_mb:64 ") != std::string::npos);  // the user's config joined the grid
        QCOMPARE(runInProcess({"recommend", "fragmentation-101", "--config", "max_split_size_mb:1"}).code, 1);
    }
};

QTEST_GUILESS_MAIN(TestWorkloadsCli)
#include "TestWorkloadsCli.moc"
