#include <QtTest>
#include <sstream>
#include <string>
#include <vector>

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

    // Every verb that runs a workload reads --seed alike (1 to 19 digits) and says so in one line
    // naming the argument (exit 1); an unknown option, a missing WORKLOAD and a second one are
    // usage errors naming the verb and its help (exit 2).
    void seedsAndUsageErrorsAreTheSameInEveryVerb() {
        for (const std::string verb : {"run", "compare", "recommend"}) {
            for (const std::string seed : {"x", "-1", "", "12345678901234567890"}) {
                std::ostringstream out, err;
                QCOMPARE(runCli({"allocscope-cli", verb, "fragmentation-101", "--seed", seed}, out, err), 1);
                QCOMPARE(QString::fromStdString(err.str()),
                         QString::fromStdString("allocscope-cli: the seed must be a non-negative integer (--seed " + seed + ")\n"));
            }
            std::ostringstream out, err;
            QCOMPARE(runCli({"allocscope-cli", verb, "fragmentation-101", "--frobnicate"}, out, err), 2);
            QCOMPARE(QString::fromStdString(err.str()),
                     QString::fromStdString("allocscope-cli: unknown option '--frobnicate' (" + verb + "; see `allocscope-cli help " + verb + "`)\n"));
            // No WORKLOAD, or two.
            std::ostringstream out2, err2;
            QCOMPARE(runCli({"allocscope-cli", verb}, out2, err2), 2);
            QCOMPARE(QString::fromStdString(err2.str()),
                     QString::fromStdString("allocscope-cli: " + verb + " needs a WORKLOAD (see `allocscope-cli workloads`) (" + verb +
                                            "; see `allocscope-cli help " + verb + "`)\n"));
            std::ostringstream out3, err3;
            QCOMPARE(runCli({"allocscope-cli", verb, "fragmentation-101", "llm-training"}, out3, err3), 2);
            QCOMPARE(QString::fromStdString(err3.str()),
                     QString::fromStdString("allocscope-cli: more than one WORKLOAD given ('llm-training') (" + verb +
                                            "; see `allocscope-cli help " + verb + "`)\n"));
        }
    }

    // A config PyTorch refuses: every verb that takes --config says where in the string (the column
    // the app's config editor names too) and what is wrong in words, then PyTorch's own message (here a bare "stoull"), on one line, exit 1.
    void aRefusedConfigIsExplainedInEveryVerb() {
        const std::string expected =
            "allocscope-cli: invalid allocator config: at column 19, 'abc' is not an unsigned integer "
            "(std::stoull throws: RuntimeError \"stoull\"); PyTorch 2.11 says: stoull (--config 'max_split_size_mb:abc')\n";
        const std::string trace = std::string(ALLOCSCOPE_TEST_DATA) + "/traces/frag101__default.pickle";
        const std::vector<std::vector<std::string>> commands = {
            {"allocscope-cli", "run", "fragmentation-101"},
            {"allocscope-cli", "compare", "fragmentation-101"},
            {"allocscope-cli", "recommend", "fragmentation-101"},
            {"allocscope-cli", "replay", trace},
        };
        for (std::vector<std::string> args : commands) {
            args.insert(args.end(), {"--config", "max_split_size_mb:abc"});
            std::ostringstream out, err;
            QCOMPARE(runCli(args, out, err), 1);
            QCOMPARE(QString::fromStdString(err.str()), QString::fromStdString(expected));
        }
    }

    // WORKLOAD|TRACE reads alike in compare and recommend: --param is for workloads only, and a
    // path where no file is says so instead of listing the workloads.
    void workloadOrTraceReadsAlikeInCompareAndRecommend() {
        const std::string trace = std::string(ALLOCSCOPE_TEST_DATA) + "/traces/frag101__default.pickle";
        for (const std::string verb : {"compare", "recommend"}) {
            std::ostringstream out, err;
            QCOMPARE(runCli({"allocscope-cli", verb, trace, "--param", "tensors=10"}, out, err), 2);
            QCOMPARE(QString::fromStdString(err.str()),
                     QString::fromStdString("allocscope-cli: --param applies to workloads, not to a TRACE (" + verb +
                                            "; see `allocscope-cli help " + verb + "`)\n"));
            std::ostringstream out2, err2;
            QCOMPARE(runCli({"allocscope-cli", verb, "no/such.pickle"}, out2, err2), 1);
            QCOMPARE(QString::fromStdString(err2.str()),
                     QString::fromStdString("allocscope-cli: no such workload, and no trace file there (no/such.pickle)\n"));
        }
    }
};

QTEST_GUILESS_MAIN(TestCliRegistry)
#include "TestCliRegistry.moc"
