// The lines `replay` prints for a recorded history that starts mid-run (app/cli/TruncationReport):
// a ring buffer that overflowed, a state-only snapshot, and nothing for a whole history.
#include <QtTest>

#include "../replay/ReplayTestData.h"
#include "allocator/replay/TraceReplayer.h"
#include "app/cli/TruncationReport.h"
#include "storage/import/TraceImport.h"

using namespace allocscope;

namespace {

alloc::ReplayResult replayPool(const QString& name) {
    const QString dir = QString::fromLocal8Bit(qgetenv("ALLOCSCOPE_TEST_DATA")) + "/pools";
    const replaytest::GroundTruth truth = replaytest::loadGroundTruth(name, dir);
    const auto traces = storage::importTraceFile((dir + "/" + name + ".pickle").toStdString());
    return alloc::TraceReplayer::replay(traces.front(), replaytest::optionsFor(truth));
}

}  // namespace

class TestTruncationReport : public QObject {
    Q_OBJECT

private slots:
    void ringBuffer() {
        const alloc::ReplayResult result = replayPool("ringbuf_train__default");
        QVERIFY(result.truncation);
        const std::vector<std::string> lines = cli::truncationReport(result);
        QCOMPARE(lines.size(), std::size_t{2});
        for (const std::string& line : lines) qInfo("%s", line.c_str());
        QVERIFY2(lines[0].starts_with("history truncated: " + std::to_string(result.truncation->blocks) + " blocks (" +
                                      std::to_string(result.truncation->bytes) + " B) were live before the first recorded entry"),
                 lines[0].c_str());
        // The second line names the window-only keys: every total and peak, the num_* counters.
        for (const char* part : {"every .peak", "every .allocated", "every .freed", "num_alloc_retries", "num_device_alloc"}) {
            QVERIFY2(lines[1].find(part) != std::string::npos, lines[1].c_str());
        }
        QVERIFY(lines[1].find(".current") == std::string::npos);
    }

    void stateOnly() {
        const std::vector<std::string> lines = cli::truncationReport(replayPool("stateonly_train__default"));
        QCOMPARE(lines.size(), std::size_t{2});
        qInfo("%s", lines[0].c_str());
        QVERIFY2(lines[0].starts_with("history truncated: no history recorded"), lines[0].c_str());
    }

    void wholeHistory() {
        const QString name = "train_gpt__default";
        const replaytest::GroundTruth truth = replaytest::loadGroundTruth(name);
        const auto traces = storage::importTraceFile((replaytest::tracesDir() + "/" + name + ".pickle").toStdString());
        QVERIFY(cli::truncationReport(alloc::TraceReplayer::replay(traces.front(), replaytest::optionsFor(truth))).empty());
    }
};

QTEST_GUILESS_MAIN(TestTruncationReport)
#include "TestTruncationReport.moc"
