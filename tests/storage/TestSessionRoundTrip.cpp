// Round trip of every shared trace (issue #5): import it into a session, export the run with
// `allocscope-cli export --pickle`, load the export with Python's pickle, import the export
// again: the same program events, the same stacks, the same replayed statistics (all 122 keys,
// and PyTorch's own where the source carries its settings). A prefix window exported with
// --from/--to replays to the statistics the run had at the window's last event.
#include <QtTest>

#include <QProcess>
#include <QStandardPaths>

#include <map>

#include "../replay/ReplayTestData.h"
#include "StorageTestSupport.h"
#include "storage/session/ProgramRecording.h"
#include "storage/session/SessionReader.h"
#include "storage/session/StateCursor.h"

using namespace allocscope;
using storagetest::statsDifference;

namespace {

// Prints "<segments> <trace entries> <entries with frames>" then "action count" lines, sorted.
constexpr const char* kPythonCheck = R"PY(
import pickle, sys, collections
with open(sys.argv[1], 'rb') as f:
    d = pickle.load(f)
t = d['device_traces'][0]
print(len(d['segments']), len(t), sum(1 for e in t if e.get('frames')))
for action, n in sorted(collections.Counter(e['action'] for e in t).items()):
    print(action, n)
)PY";

struct Imported {
    int run = 0;
    std::vector<alloc::Event> events;
    alloc::DeviceStats finalStats;
};

std::vector<alloc::Event> allEvents(storage::SessionReader& reader, int run) {
    std::vector<alloc::Event> out;
    const std::uint64_t count = reader.run(run).eventCount;
    reader.forEachChunk(run, 0, count, [&](std::uint64_t, const std::vector<alloc::Event>& events) {
        out.insert(out.end(), events.begin(), events.end());
        return true;
    });
    return out;
}

// "" when both runs have the same events (every field) and the same frames behind every stack.
std::string eventDifference(storage::SessionReader& a, int runA, const std::vector<alloc::Event>& want, storage::SessionReader& b,
                            int runB, const std::vector<alloc::Event>& got) {
    if (want.size() != got.size()) {
        return "event count " + std::to_string(got.size()) + " != " + std::to_string(want.size());
    }
    std::map<std::pair<std::uint32_t, std::uint32_t>, bool> stacksChecked;
    for (std::size_t i = 0; i < want.size(); ++i) {
        const alloc::Event& x = want[i];
        const alloc::Event& y = got[i];
        if (x.seq != y.seq || x.opIndex != y.opIndex || x.action != y.action || x.cause != y.cause || x.address != y.address ||
            x.size != y.size || x.roundedSize != y.roundedSize || x.stream != y.stream || x.segment != y.segment ||
            x.pool != y.pool) {
            return "event " + std::to_string(i) + " differs: " + std::string(alloc::actionName(y.action)) + " at " +
                   std::to_string(y.address) + " (" + std::to_string(y.size) + " B, op " + std::to_string(y.opIndex) + ") vs " +
                   std::string(alloc::actionName(x.action)) + " at " + std::to_string(x.address) + " (" + std::to_string(x.size) +
                   " B, op " + std::to_string(x.opIndex) + ")";
        }
        if (stacksChecked.emplace(std::make_pair(x.stackId, y.stackId), true).second &&
            a.stack(runA, x.stackId) != b.stack(runB, y.stackId)) {
            return "event " + std::to_string(i) + ": the frames of its stack differ";
        }
    }
    return {};
}

}  // namespace

class TestSessionRoundTrip : public QObject {
    Q_OBJECT

private:
    QTemporaryDir dir_;
    QString python_;

    std::string path(const QString& name) const { return dir_.filePath(name).toStdString(); }

    storage::ImportTarget targetFor(const replaytest::GroundTruth& truth) {
        storage::ImportTarget target;
        target.totalMemory = truth.totalMemory;
        target.memoryFraction = truth.fraction;
        return target;
    }

    Imported import(const std::string& session, const std::string& file, const storage::ImportTarget& target) {
        Imported out;
        {
            storage::SessionWriter writer(session);
            const auto runs = storage::importTraceFile(writer, file, target);
            if (runs.size() != 1) qFatal("expected one run from %s", file.c_str());
            if (!runs[0].divergence.empty()) qWarning("%s diverged: %s", file.c_str(), runs[0].divergence.c_str());
            out.run = runs[0].runNumber;
        }
        storage::SessionReader reader(session);
        out.events = allEvents(reader, out.run);
        out.finalStats = reader.run(out.run).summary->finalStats;
        return out;
    }

    // `allocscope-cli export`; then Python's pickle loads the file and says what it holds.
    QStringList exportAndLoad(const std::string& session, int run, const std::string& out, const QStringList& window = {}) {
        QProcess cli;
        cli.start(qEnvironmentVariable("ALLOCSCOPE_CLI"),
                  QStringList{"export", "--db", QString::fromStdString(session), "--run", QString::number(run), "--pickle",
                              QString::fromStdString(out)} +
                      window);
        if (!cli.waitForFinished(120000) || cli.exitCode() != 0) {
            qWarning("export failed: %s", cli.readAllStandardError().constData());
            return {};
        }
        QProcess py;
        py.start(python_, {"-c", kPythonCheck, QString::fromStdString(out)});
        if (!py.waitForFinished(120000) || py.exitCode() != 0) {
            qWarning("python could not load the export: %s", py.readAllStandardError().constData());
            return {};
        }
        return QString::fromUtf8(py.readAllStandardOutput()).split('\n', Qt::SkipEmptyParts);
    }

    // What Python should have seen: segments at `last`, the events [first, last] and their actions.
    static QStringList expectedLoad(storage::SessionReader& reader, int run, const std::vector<alloc::Event>& events,
                                    std::uint64_t first, std::uint64_t last) {
        storage::StateCursor cursor(reader, run);
        const std::size_t segments = cursor.load(last).segments.size();
        std::map<std::string, std::size_t> actions;
        std::size_t withFrames = 0;
        for (std::uint64_t i = first; i <= last; ++i) {
            ++actions[std::string(alloc::actionName(events[i].action))];
            withFrames += !reader.stack(run, events[i].stackId).empty();
        }
        QStringList lines{QString("%1 %2 %3").arg(segments).arg(last - first + 1).arg(withFrames)};
        for (const auto& [action, n] : actions) lines << QString("%1 %2").arg(QString::fromStdString(action)).arg(n);
        return lines;
    }

private slots:
    void initTestCase() {
        python_ = QStandardPaths::findExecutable("python3");
        QVERIFY2(!python_.isEmpty(), "python3 is needed to load the exported pickles (scripts/test installs it)");
        QVERIFY(!qEnvironmentVariable("ALLOCSCOPE_CLI").isEmpty());
    }

    void roundTrip_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("extension");
        for (const QString& name : replaytest::traceNames()) QTest::newRow(qPrintable(name + ".pickle")) << name << "pickle";
        // RMM CSVs carry no settings and no segment events: they replay to PyTorch's statistics
        // only when recorded under the defaults, and not frag101's (its explicit empty_cache()
        // is invisible in a CSV).
        for (const QString& name : replaytest::traceNames()) {
            if (!name.startsWith("frag101") && name.endsWith("__default")) QTest::newRow(qPrintable(name + ".csv")) << name << "csv";
        }
    }

    void roundTrip() {
        QFETCH(QString, name);
        QFETCH(QString, extension);
        const replaytest::GroundTruth truth = replaytest::loadGroundTruth(name);
        QVERIFY(truth.loaded);
        const std::string source = (replaytest::tracesDir() + "/" + name + "." + extension).toStdString();
        const std::string first = path(name + "." + extension + ".first.allocscope");
        const std::string second = path(name + "." + extension + ".second.allocscope");
        const std::string exported = path(name + "." + extension + ".export.pickle");
        const storage::ImportTarget target = targetFor(truth);

        const Imported one = import(first, source, target);
        QCOMPARE(storage::SessionReader(first).run(one.run).divergence, std::string());
        const QString diff = replaytest::diffStats(truth.stats, one.finalStats);
        QVERIFY2(diff.isEmpty(), qPrintable("first import vs PyTorch: " + diff));

        storage::SessionReader reader(first);
        const QStringList loaded = exportAndLoad(first, one.run, exported);
        QCOMPARE(loaded, expectedLoad(reader, one.run, one.events, 0, one.events.size() - 1));

        const Imported two = import(second, exported, target);
        storage::SessionReader again(second);
        QCOMPARE(again.run(two.run).divergence, std::string());
        const std::string events = eventDifference(reader, one.run, one.events, again, two.run, two.events);
        QVERIFY2(events.empty(), events.c_str());
        const std::string stats = statsDifference(one.finalStats, two.finalStats);
        QVERIFY2(stats.empty(), stats.c_str());
        QVERIFY(replaytest::diffStats(truth.stats, two.finalStats).isEmpty());
        // The phases (record_function regions) came back between the same events.
        const auto phasesOne = reader.phases(one.run);
        const auto phasesTwo = again.phases(two.run);
        QCOMPARE(phasesTwo.size(), phasesOne.size());
        for (std::size_t i = 0; i < phasesOne.size(); ++i) {
            QCOMPARE(phasesTwo[i].name, phasesOne[i].name);
            QCOMPARE(phasesTwo[i].firstSeq, phasesOne[i].firstSeq);
            QCOMPARE(phasesTwo[i].lastSeq, phasesOne[i].lastSeq);
            QCOMPARE(phasesTwo[i].firstOp, phasesOne[i].firstOp);
        }
    }

    void windowRoundTrip_data() {
        QTest::addColumn<QString>("name");
        QTest::newRow("frag101__default") << "frag101__default";  // the window crosses its empty_cache()
        QTest::newRow("train_gpt__gc06_msplit256") << "train_gpt__gc06_msplit256";
        QTest::newRow("kv_growth_limited__expandable") << "kv_growth_limited__expandable";
    }

    void windowRoundTrip() {
        QFETCH(QString, name);
        const replaytest::GroundTruth truth = replaytest::loadGroundTruth(name);
        const std::string source = (replaytest::tracesDir() + "/" + name + ".pickle").toStdString();
        const std::string session = path(name + ".window.allocscope");
        const Imported whole = import(session, source, targetFor(truth));
        storage::SessionReader reader(session);
        storage::StateCursor cursor(reader, whole.run);

        // Window ends at op boundaries (the last event of an op) spread over the run.
        std::vector<std::uint64_t> ends;
        for (const double share : {0.2, 0.55, 0.9}) {
            std::uint64_t e = static_cast<std::uint64_t>(share * static_cast<double>(whole.events.size()));
            while (e + 1 < whole.events.size() && whole.events[e + 1].opIndex == whole.events[e].opIndex) ++e;
            ends.push_back(e);
        }
        for (const std::uint64_t last : ends) {
            const QString tag = QString("%1.to%2").arg(name).arg(last);
            const std::string exported = path(tag + ".pickle");
            const QStringList loaded = exportAndLoad(session, whole.run, exported, {"--from", "0", "--to", QString::number(last)});
            QCOMPARE(loaded, expectedLoad(reader, whole.run, whole.events, 0, last));
            const Imported window = import(path(tag + ".allocscope"), exported, targetFor(truth));
            storage::SessionReader windowReader(path(tag + ".allocscope"));
            QCOMPARE(windowReader.run(window.run).divergence, std::string());
            const std::vector<alloc::Event> prefix(whole.events.begin(), whole.events.begin() + static_cast<std::ptrdiff_t>(last + 1));
            const std::string events = eventDifference(reader, whole.run, prefix, windowReader, window.run, window.events);
            QVERIFY2(events.empty(), qPrintable(tag + ": " + QString::fromStdString(events)));
            const std::string stats = statsDifference(cursor.load(last).stats, window.finalStats);
            QVERIFY2(stats.empty(), qPrintable(tag + ": " + QString::fromStdString(stats)));
        }

        // A window that starts mid-run loads too (its replay would need the state before it,
        // which a snapshot cannot carry: only loading is checked).
        const std::uint64_t from = ends[0] + 1, to = ends[1];
        const QStringList loaded = exportAndLoad(session, whole.run, path(name + ".mid.pickle"),
                                                 {"--from", QString::number(from), "--to", QString::number(to)});
        QCOMPARE(loaded, expectedLoad(reader, whole.run, whole.events, from, to));
    }
};

QTEST_GUILESS_MAIN(TestSessionRoundTrip)
#include "TestSessionRoundTrip.moc"
