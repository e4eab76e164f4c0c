// `allocscope-cli merge OUT IN...`: every run of every input lands in OUT, in order, and reads
// back exactly as in its input (row, summary, verdict, history start, events, state at events,
// heatmap, phases, stacks); the inputs stay byte-identical with no sidecar; an existing OUT, a
// file that is no session, an older, damaged or missing session are refused by name and leave
// nothing at OUT (nor a temporary file beside it).
#include <QtTest>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "storage/session/EventCodec.h"
#include "storage/session/HeatmapTable.h"
#include "storage/session/SessionReader.h"
#include "storage/session/SqliteDb.h"
#include "storage/session/StateCursor.h"
#include "tests/FileBytes.h"
#include "tests/cli/InProcessCli.h"
#include "tests/storage/SchemaTwoFile.h"

using namespace allocscope;
using clitest::CliResult;
using clitest::runInProcess;

namespace {

std::string data(const std::string& name) { return std::string(ALLOCSCOPE_TEST_DATA) + "/" + name; }
bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string encoded(const std::vector<alloc::Event>& events) {
    std::string blob;
    storage::EventCodec::encode(events.data(), events.size(), blob);
    return blob;
}

// The files in a folder (OUT and any temporary name a merge might leave).
QStringList entries(const QTemporaryDir& dir) { return QDir(dir.path()).entryList(QDir::Files | QDir::Hidden); }

}  // namespace

class TestMergeVerb : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::string a_, b_;

    std::string path(const std::string& name) const { return dir_.filePath(QString::fromStdString(name)).toStdString(); }

    // Checks that run `to` of `merged` is run `from` of `source` in every respect a reader sees.
    void compareRun(storage::SessionReader& source, int from, storage::SessionReader& merged, int to) {
        const storage::RunRow a = source.run(from);
        const storage::RunRow b = merged.run(to);
        QCOMPARE(b.info.name, a.info.name);
        QCOMPARE(b.info.sourceKind, a.info.sourceKind);
        QCOMPARE(b.info.source, a.info.source);
        QCOMPARE(b.info.config, a.info.config);
        QCOMPARE(b.info.gpu, a.info.gpu);
        QCOMPARE(b.info.totalMemory, a.info.totalMemory);
        QCOMPARE(b.info.memoryFraction, a.info.memoryFraction);
        QVERIFY(b.status == a.status);
        QCOMPARE(b.createdAt, a.createdAt);
        QCOMPARE(b.eventCount, a.eventCount);
        QCOMPARE(b.divergence, a.divergence);
        QVERIFY(a.summary && b.summary);
        QCOMPARE(b.summary->peakReserved, a.summary->peakReserved);
        QCOMPARE(b.summary->peakAllocated, a.summary->peakAllocated);
        QCOMPARE(b.summary->opCount, a.summary->opCount);
        QCOMPARE(b.summary->numOoms, a.summary->numOoms);
        QVERIFY(b.summary->actionCounts == a.summary->actionCounts);
        QVERIFY(b.summary->finalStats == a.summary->finalStats);
        QVERIFY(b.historyStart == a.historyStart);
        QVERIFY(b.verdict == a.verdict);

        // Every event, and every stack an event names.
        const storage::EventPage ea = source.events(from, 0, a.eventCount);
        const storage::EventPage eb = merged.events(to, 0, b.eventCount);
        QCOMPARE(eb.events.size(), static_cast<std::size_t>(a.eventCount));
        QVERIFY(encoded(eb.events) == encoded(ea.events));
        std::set<std::uint32_t> stackIds;
        for (const alloc::Event& e : ea.events) stackIds.insert(e.stackId);
        for (std::uint32_t id : stackIds) QVERIFY(merged.stack(to, id) == source.stack(from, id));

        // The state at the first, a middle and the last event (keyframes plus deltas).
        storage::StateCursor ca(source, from), cb(merged, to);
        for (std::uint64_t seq : {std::uint64_t{0}, a.eventCount / 2, a.eventCount - 1}) {
            const storage::StateAtEvent sa = ca.load(seq);
            const storage::StateAtEvent sb = cb.load(seq);
            QVERIFY(sb.stats == sa.stats);
            QCOMPARE(sb.segments.size(), sa.segments.size());
        }

        const std::optional<storage::HeatmapGrid> ha = storage::HeatmapTable::read(source.db(), from);
        const std::optional<storage::HeatmapGrid> hb = storage::HeatmapTable::read(merged.db(), to);
        QVERIFY(ha && hb);
        QCOMPARE(hb->columns, ha->columns);
        QCOMPARE(hb->rows, ha->rows);
        QVERIFY(hb->columnEvents == ha->columnEvents);
        QVERIFY(hb->shares == ha->shares);

        const std::vector<storage::PhaseSpan> pa = source.phases(from), pb = merged.phases(to);
        QCOMPARE(pb.size(), pa.size());
        for (std::size_t i = 0; i < pa.size(); ++i) {
            QCOMPARE(pb[i].name, pa[i].name);
            QCOMPARE(pb[i].firstSeq, pa[i].firstSeq);
            QCOMPARE(pb[i].lastSeq, pa[i].lastSeq);
        }
    }

    // A refused merge: exit 1, one line naming `culprit`, nothing written in the folder.
    void expectRefused(const std::vector<std::string>& args, const std::string& culprit, const std::string& what) {
        const QStringList before = entries(dir_);
        const CliResult r = runInProcess(args);
        QCOMPARE(r.code, 1);
        QVERIFY2(contains(r.err, what) && contains(r.err, "(" + culprit), r.err.c_str());
        QCOMPARE(std::count(r.err.begin(), r.err.end(), '\n'), std::ptrdiff_t{1});
        QCOMPARE(entries(dir_), before);
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        a_ = path("node-a.allocscope");
        b_ = path("node-b.allocscope");
        // A: a workload (its stacks) and a replay of a real trace (stacks, phases, an exact verdict).
        QCOMPARE(runInProcess({"run", "fragmentation-101", "--db", a_}).code, 0);
        QCOMPARE(runInProcess({"replay", data("traces/frag101__default.pickle"), "--db", a_}).code, 0);
        // B: a state-only snapshot (history starts mid-run) and private pools.
        QCOMPARE(runInProcess({"import", data("pools/stateonly_train__default.pickle"), "--db", b_}).code, 0);
        QCOMPARE(runInProcess({"import", data("pools/mempool_mix__default.pickle"), "--db", b_}).code, 0);
    }

    void mergedRunsReadBackIdentical() {
        const QByteArray hashA = testfiles::sha256Of(QString::fromStdString(a_));
        const QByteArray hashB = testfiles::sha256Of(QString::fromStdString(b_));
        const std::string out = path("cluster.allocscope");
        const CliResult r = runInProcess({"merge", out, a_, b_});
        QVERIFY2(r.code == 0, r.err.c_str());
        QVERIFY(contains(r.out, "run 3: stateonly_train__default"));
        QVERIFY(contains(r.out, "(" + b_ + ", run 1)"));
        QVERIFY(contains(r.out, "merged 4 runs of 2 sessions into " + out));

        // The inputs are only read.
        QCOMPARE(testfiles::sha256Of(QString::fromStdString(a_)), hashA);
        QCOMPARE(testfiles::sha256Of(QString::fromStdString(b_)), hashB);
        for (const std::string& input : {a_, b_}) {
            for (const char* suffix : {"-wal", "-shm", "-journal"}) QVERIFY(!std::filesystem::exists(input + suffix));
        }

        storage::SessionReader merged(out, true);
        QCOMPARE(merged.runs().size(), std::size_t{4});
        storage::SessionReader ra(a_, true), rb(b_, true);
        QVERIFY(rb.run(1).historyStart.has_value());  // the case is really covered
        QVERIFY(ra.run(2).verdict.kind == storage::VerdictKind::Exact);
        compareRun(ra, 1, merged, 1);
        compareRun(ra, 2, merged, 2);
        compareRun(rb, 1, merged, 3);
        compareRun(rb, 2, merged, 4);
    }

    void refusesBadInputsByName() {
        const std::string out = path("refused.allocscope");
        // An existing OUT is never touched, whatever the inputs are.
        const std::string existing = path("existing.allocscope");
        QVERIFY(std::filesystem::copy_file(a_, existing));
        const QByteArray hash = testfiles::sha256Of(QString::fromStdString(existing));
        expectRefused({"merge", existing, b_}, existing, "already exists");
        QCOMPARE(testfiles::sha256Of(QString::fromStdString(existing)), hash);

        const std::string text = path("notes.txt");
        {
            std::ofstream(text) << "not a session\n";
        }
        expectRefused({"merge", out, a_, text}, text, "not an AllocScope session");
        expectRefused({"merge", out, a_, path("missing.allocscope")}, path("missing.allocscope"), "no such session file");

        const std::string older = path("older.allocscope");
        QVERIFY(std::filesystem::copy_file(b_, older));
        storagetest::rewriteAsSchemaTwo(older);
        expectRefused({"merge", out, a_, older}, older, "migrate");

        const std::string damaged = path("damaged.allocscope");
        QVERIFY(std::filesystem::copy_file(a_, damaged));
        {
            storage::SqliteDb db(damaged, storage::SqliteDb::Mode::ReadWriteCreate);
            db.exec("DELETE FROM summary WHERE run = 1");
        }
        expectRefused({"merge", out, damaged, b_}, damaged, "damaged");
    }

    // A table a later build adds (like the optional run_verdict and history_start tables): rows
    // with a `run` column go with their run; a table whose rows belong to no run is refused by
    // name rather than dropped.
    void carriesTablesItDoesNotKnow() {
        const std::string later = path("later.allocscope");
        QVERIFY(std::filesystem::copy_file(a_, later));
        {
            storage::SqliteDb db(later, storage::SqliteDb::Mode::ReadWriteCreate);
            db.exec("CREATE TABLE later_extra (run INTEGER NOT NULL REFERENCES run(id), note TEXT NOT NULL, PRIMARY KEY (run, note));"
                    "INSERT INTO later_extra VALUES (1, 'first'), (2, 'second'), (2, 'more')");
        }
        const std::string out = path("with-later.allocscope");
        const CliResult r = runInProcess({"merge", out, b_, later});
        QVERIFY2(r.code == 0, r.err.c_str());
        {
            storage::SqliteDb db(out, storage::SqliteDb::Mode::ReadOnly);
            storage::SqliteStatement rows = db.prepare("SELECT run, note FROM later_extra ORDER BY run, note");
            std::vector<std::pair<std::int64_t, std::string>> got;
            while (rows.step()) got.emplace_back(rows.columnInt(0), rows.columnText(1));
            const std::vector<std::pair<std::int64_t, std::string>> expected = {{3, "first"}, {4, "more"}, {4, "second"}};
            QVERIFY(got == expected);  // b_'s two runs come first: later's runs 1, 2 are 3, 4
        }

        const std::string unknown = path("unknown.allocscope");
        QVERIFY(std::filesystem::copy_file(a_, unknown));
        {
            storage::SqliteDb db(unknown, storage::SqliteDb::Mode::ReadWriteCreate);
            db.exec("CREATE TABLE shared_later (id INTEGER PRIMARY KEY, what TEXT)");
        }
        expectRefused({"merge", path("never.allocscope"), b_, unknown}, "merging " + unknown, "'shared_later'");
    }

    void usageErrors() {
        QCOMPARE(runInProcess({"merge"}).code, 2);
        QCOMPARE(runInProcess({"merge", path("only-out.allocscope")}).code, 2);
        QCOMPARE(runInProcess({"merge", "--force", path("x.allocscope"), a_}).code, 2);
        QVERIFY(!std::filesystem::exists(path("only-out.allocscope")));
    }
};

QTEST_GUILESS_MAIN(TestMergeVerb)
#include "TestMergeVerb.moc"
