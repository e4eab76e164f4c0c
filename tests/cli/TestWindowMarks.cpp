// What-if reports on a ring-buffer window (issue 36): `compare`, `recommend` and `replay` of a
// snapshot that kept only its last max_entries trace entries mark every figure that covers only
// that window ("(window)", a legend line, compare --json's "window" object) and none of the
// end-state figures, which the final segments give for the whole run; a whole history shows no
// mark at all.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>
#include <regex>
#include <string>

#include "InProcessCli.h"

using clitest::runInProcess;

namespace {

std::string data(const char* rel) {
    return (QString::fromLocal8Bit(qgetenv("ALLOCSCOPE_TEST_DATA")) + "/" + rel).toStdString();
}

const char* const kRingBuffer = "pools/ringbuf_train__default.pickle";
const char* const kWholeHistory = "traces/train_gpt__default.pickle";

QJsonObject groundTruth(const char* rel) {
    QFile file(QString::fromStdString(data(rel)));
    if (!file.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(file.readAll()).object();
}

// The header line of compare's table: the line that starts with its first column's name (the
// title and the memory limit's line come before it).
std::string headerLine(const std::string& out) {
    const std::size_t start = out.find("\nconfig ");
    if (start == std::string::npos) return {};
    return out.substr(start + 1, out.find('\n', start + 1) - start - 1);
}

bool marked(const std::string& text, const std::string& figure) {
    return text.find(figure + " (window)") != std::string::npos;
}

}  // namespace

class TestWindowMarks : public QObject {
    Q_OBJECT

private slots:
    void compareTableMarksWindowOnlyColumns() {
        const clitest::CliResult r =
            runInProcess({"compare", data(kRingBuffer), "--config", "", "--config",
                          "expandable_segments:True", "--threads", "1"});
        QVERIFY2(r.code == 0, r.err.c_str());
        qInfo("%s", r.out.c_str());
        const std::string head = headerLine(r.out);
        for (const char* figure :
             {"peak alloc MiB", "peak reserved MiB", "stranded@peak MiB", "frag@peak", "cudaMalloc",
              "cudaFree", "map", "unmap", "retries", "OOMs", "est. alloc ms"}) {
            QVERIFY2(marked(head, figure), figure);
        }
        // The end state is the whole run's: what empty_cache() could release there is not marked.
        QVERIFY2(head.find("releasable@end MiB") != std::string::npos &&
                     !marked(head, "releasable@end MiB"),
                 head.c_str());
        QVERIFY(head.find("config (window)") == std::string::npos);
        // One legend, saying how many entries the window holds: the recording's max_entries.
        const int maxEntries =
            groundTruth("pools/ringbuf_train__default.json")["record_memory_history"]
                .toObject()["max_entries"]
                .toInt();
        QCOMPARE(maxEntries, 3000);
        const std::string legend = "window: figures marked (window) cover only the last " +
                                   std::to_string(maxEntries) + " of the run's trace entries";
        QVERIFY2(r.out.find(legend) != std::string::npos, r.out.c_str());
        QVERIFY(r.out.find("cannot be compared with whole-run figures") != std::string::npos);
        QCOMPARE(r.out.find("window: "), r.out.rfind("window: "));
    }

    void compareJsonNamesWindowOnlyFigures() {
        const clitest::CliResult r = runInProcess(
            {"compare", data(kRingBuffer), "--config", "", "--threads", "1", "--json"});
        QVERIFY2(r.code == 0, r.err.c_str());
        QJsonParseError error;
        const QJsonObject doc =
            QJsonDocument::fromJson(QByteArray::fromStdString(r.out), &error).object();
        QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(error.errorString()));
        const QJsonObject window = doc["window"].toObject();
        QCOMPARE(window["entries"].toInt(), 3000);
        QCOMPARE(window["state_only"].toBool(), false);
        QVERIFY(window["note"].toString().startsWith(
            "window: figures marked (window) cover only the last 3000"));
        QStringList windowOnly, wholeRun;
        for (const QJsonValue& v : window["window_only"].toArray()) windowOnly << v.toString();
        for (const QJsonValue& v : window["whole_run"].toArray()) wholeRun << v.toString();
        for (const char* figure : {"peak_allocated", "peak_reserved", "peak_reserved_op", "at_peak",
                                   "cuda_malloc", "cuda_free", "gc_releases", "map", "unmap",
                                   "retries", "ooms", "estimated_allocator_us"}) {
            QVERIFY2(windowOnly.contains(figure), figure);
        }
        QCOMPARE(wholeRun, (QStringList{"final_allocated", "final_reserved", "at_end"}));
        // Every name either list gives is a figure of each run, so a reader can look them up.
        const QJsonObject run = doc["runs"].toArray().first().toObject();
        for (const QString& figure : windowOnly + wholeRun)
            QVERIFY2(run.contains(figure), qPrintable(figure));
        // What "window" claims: the window's peak is a lower bound of the whole run's, which
        // PyTorch counted from the start (the recording's ground truth).
        const QJsonObject stats =
            groundTruth("pools/ringbuf_train__default.json")["memory_stats"].toObject();
        QVERIFY(run["peak_reserved"].toDouble() <= stats["reserved_bytes.all.peak"].toDouble());
        QVERIFY(run["peak_allocated"].toDouble() <= stats["allocated_bytes.all.peak"].toDouble());
    }

    // A state-only snapshot keeps no history at all: its legend says so rather than naming a count.
    void stateOnlySnapshotSaysItKeptNoHistory() {
        const clitest::CliResult r =
            runInProcess({"compare", data("pools/stateonly_train__default.pickle"), "--config", "",
                          "--threads", "1", "--json"});
        QVERIFY2(r.code == 0, r.err.c_str());
        const QJsonObject window =
            QJsonDocument::fromJson(QByteArray::fromStdString(r.out)).object()["window"].toObject();
        QCOMPARE(window["state_only"].toBool(), true);
        QVERIFY2(window["note"].toString().startsWith("window: the snapshot kept no history"),
                 qPrintable(window["note"].toString()));
    }

    void wholeHistoryHasNoMarks() {
        const clitest::CliResult text =
            runInProcess({"compare", data(kWholeHistory), "--config", "", "--threads", "1"});
        QVERIFY2(text.code == 0, text.err.c_str());
        QVERIFY2(text.out.find("(window)") == std::string::npos, text.out.c_str());
        QVERIFY(text.out.find("window: ") == std::string::npos);
        const clitest::CliResult json = runInProcess(
            {"compare", data(kWholeHistory), "--config", "", "--threads", "1", "--json"});
        QVERIFY2(json.code == 0, json.err.c_str());
        const QJsonObject doc =
            QJsonDocument::fromJson(QByteArray::fromStdString(json.out)).object();
        QVERIFY(doc.contains("window"));
        QVERIFY(doc["window"].isNull());
        const clitest::CliResult replay = runInProcess({"replay", data(kWholeHistory)});
        QVERIFY2(replay.code == 0, replay.err.c_str());
        QVERIFY2(replay.out.find("(window)") == std::string::npos, replay.out.c_str());
    }

    void replayMarksItsPeaksAndCounts() {
        const clitest::CliResult r = runInProcess({"replay", data(kRingBuffer)});
        QVERIFY2(r.code == 0, r.err.c_str());
        qInfo("%s", r.out.c_str());
        const std::regex figures(
            R"(peak reserved \d+ B \(window\), peak allocated \d+ B \(window\), device allocs \d+ \(window\), OOMs \d+ \(window\))");
        QVERIFY2(std::regex_search(r.out, figures), r.out.c_str());
        QVERIFY(r.out.find("window: figures marked (window) cover only the last 3000") !=
                std::string::npos);
        // The counts of what the replay did (ops, events) and its verdict carry no mark.
        QVERIFY(r.out.find("events (window)") == std::string::npos);
    }

    void recommendMarksPeaksAndGpuSizes() {
        const clitest::CliResult r = runInProcess({"recommend", data(kRingBuffer)});
        QVERIFY2(r.code == 0, r.err.c_str());
        qInfo("%s", r.out.c_str());
        QVERIFY(marked(headerLine(r.out), "peak reserved MiB"));
        QVERIFY2(
            std::regex_search(
                r.out,
                std::regex(
                    R"(peak reserved [0-9.]+ MiB \(window\), lowest of the grid [0-9.]+ MiB \(window\))")),
            r.out.c_str());
        // The smallest GPU found by running the window is a lower bound too.
        QVERIFY(r.out.find("smallest GPU without an OOM (total memory, binary search) (window):") !=
                std::string::npos);
        QVERIFY(std::regex_search(r.out, std::regex(R"(\d+\.\d MiB \(window\)\n)")));
        QVERIFY(r.out.find("window: figures marked (window)") != std::string::npos);
        const clitest::CliResult whole =
            runInProcess({"recommend", data(kWholeHistory), "--no-gpu-search"});
        QVERIFY2(whole.code == 0, whole.err.c_str());
        QVERIFY2(whole.out.find("(window)") == std::string::npos, whole.out.c_str());
    }
};

QTEST_GUILESS_MAIN(TestWindowMarks)
#include "TestWindowMarks.moc"
