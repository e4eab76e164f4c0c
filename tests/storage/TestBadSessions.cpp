// The bad-session corpus, generated into the test's temp dir: empty, truncated, random bytes,
// another application's SQLite database, a newer schema, an older schema, a damaged page, runs
// whose rows are missing. Each is refused with a clear message (library and `info` verb), and
// each file is byte-identical afterwards with no sidecar beside it.
#include <QtTest>

#include <QCryptographicHash>
#include <QProcess>
#include <filesystem>
#include <fstream>

#include "SchemaTwoFile.h"
#include "StorageTestSupport.h"
#include "storage/session/HeatmapQuery.h"
#include "storage/session/SessionError.h"
#include "storage/session/SessionReader.h"
#include "storage/session/SessionSchema.h"
#include "storage/session/SqliteDb.h"

using namespace allocscope;
using namespace storagetest;

class TestBadSessions : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::string good_;

    std::string make(const std::string& name, const std::string& bytes) {
        const std::string path = dir_.filePath(QString::fromStdString(name)).toStdString();
        std::ofstream(path, std::ios::binary) << bytes;
        return path;
    }
    std::string copyOfGood(const std::string& name) {
        const std::string path = dir_.filePath(QString::fromStdString(name)).toStdString();
        std::filesystem::copy_file(good_, path);
        return path;
    }
    static void execOn(const std::string& path, const std::string& sql) {
        storage::SqliteDb db(path, storage::SqliteDb::Mode::ReadWriteCreate);
        db.exec(sql);
    }

private slots:
    void initTestCase() {
        good_ = dir_.filePath("good.allocscope").toStdString();
        storage::SessionWriter writer(good_);
        recordProgram(&writer, randomProgram(41, 4000), "default", {.batchEvents = 256, .keyframeInterval = 1024, .onCommitted = {}});
        recordProgram(&writer, randomProgram(42, 1000), "default");
    }

    void refused_data() {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("message");
        const std::string good = readAll(good_);
        QVERIFY(good.size() > 64 * 1024);

        QTest::newRow("empty") << QString::fromStdString(make("empty.allocscope", "")) << "empty file, not an AllocScope session";
        QTest::newRow("truncated") << QString::fromStdString(make("truncated.allocscope", good.substr(0, good.size() / 2)))
                                   << "damaged";
        QTest::newRow("header only") << QString::fromStdString(make("header.allocscope", good.substr(0, 60))) << "damaged";
        std::string random(64 * 1024, '\0');
        alloc::Rng rng(7);
        for (char& c : random) c = static_cast<char>(rng.next());
        QTest::newRow("random bytes") << QString::fromStdString(make("random.allocscope", random))
                                      << "not an AllocScope session (not a SQLite database)";
        const std::string other = dir_.filePath("other.sqlite").toStdString();
        execOn(other, "CREATE TABLE photos(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO photos(name) VALUES ('cat');");
        QTest::newRow("other application") << QString::fromStdString(other) << "a SQLite database of another application";
        const std::string newer = copyOfGood("newer.allocscope");
        execOn(newer, "PRAGMA user_version = 99");
        QTest::newRow("newer schema") << QString::fromStdString(newer) << "newer AllocScope (schema 99";
        const std::string older = copyOfGood("older.allocscope");
        execOn(older, "PRAGMA user_version = 0");
        QTest::newRow("older schema") << QString::fromStdString(older) << "older schema 0";
        // A damaged page: overwrite a page in the middle of the file with garbage.
        std::string damaged = good;
        const std::size_t page = 8192;
        const std::size_t victim = (damaged.size() / page / 2) * page;
        for (std::size_t i = 0; i < page; ++i) damaged[victim + i] = static_cast<char>(rng.next());
        QTest::newRow("damaged page") << QString::fromStdString(make("damaged.allocscope", damaged)) << "damaged";
        const std::string missingChunk = copyOfGood("missing-chunk.allocscope");
        execOn(missingChunk, "DELETE FROM event_chunk WHERE run = 1 AND first_seq = 512");
        QTest::newRow("missing event rows") << QString::fromStdString(missingChunk) << "events but";
        const std::string missingSummary = copyOfGood("missing-summary.allocscope");
        execOn(missingSummary, "DELETE FROM summary WHERE run = 2");
        QTest::newRow("missing summary") << QString::fromStdString(missingSummary) << "summary or heatmap row is missing";
        const std::string missingKeyframe = copyOfGood("missing-keyframe.allocscope");
        execOn(missingKeyframe, "DELETE FROM keyframe WHERE run = 1 AND seq = 0");
        QTest::newRow("missing keyframe") << QString::fromStdString(missingKeyframe) << "first keyframe is missing";
        const std::string orphan = copyOfGood("orphan.allocscope");
        execOn(orphan, "DELETE FROM run WHERE id = 2");
        QTest::newRow("rows of a missing run") << QString::fromStdString(orphan) << "reference missing rows";
        const std::string dir = dir_.filePath("a-directory.allocscope").toStdString();
        std::filesystem::create_directory(dir);
        QTest::newRow("directory") << QString::fromStdString(dir) << "is a directory";
    }

    void refused() {
        QFETCH(QString, path);
        QFETCH(QString, message);
        const std::string file = path.toStdString();
        QVERIFY(!sidecarsPresent(file));
        const std::string before = std::filesystem::is_directory(file) ? std::string() : readAll(file);
        QString error;
        try {
            storage::SessionReader reader(file);
            reader.runs();
        } catch (const storage::SessionError& e) {
            error = QString::fromStdString(e.what());
            QCOMPARE(QString::fromStdString(e.where()).left(path.size()), path);
        }
        QVERIFY2(error.contains(message), qPrintable("got: '" + error + "'"));
        // The writer (recording into it) refuses it the same way.
        try {
            storage::SessionWriter writer(file);
            QFAIL("the writer accepted a bad session");
        } catch (const storage::SessionError& e) {
            QVERIFY2(QString::fromStdString(e.what()).contains(message), e.what());
        }
        QProcess cli;
        cli.start(qEnvironmentVariable("ALLOCSCOPE_CLI"), {"info", path});
        QVERIFY(cli.waitForFinished(60000));
        QCOMPARE(cli.exitCode(), 1);
        const QString err = QString::fromUtf8(cli.readAllStandardError());
        QVERIFY2(err.startsWith("allocscope-cli: ") && err.count('\n') == 1 && err.contains(message) && err.contains(path),
                 qPrintable(err));
        if (!std::filesystem::is_directory(file)) QCOMPARE(readAll(file), before);
        QVERIFY(!sidecarsPresent(file));
    }

    void goodFileStillOpens() {
        storage::SessionReader reader(good_);
        QCOMPARE(reader.runs().size(), std::size_t(2));
    }

    void olderSchemaIsMigratedIntoACopyOnly() {
        const std::string older = copyOfGood("older-to-migrate.allocscope");
        execOn(older, "PRAGMA user_version = 0");
        const std::string before = readAll(older);
        const std::string copy = dir_.filePath("migrated.allocscope").toStdString();
        storage::SessionSchema::migrateToCopy(older, copy);
        QCOMPARE(readAll(older), before);
        QVERIFY(!sidecarsPresent(older));
        storage::SessionReader reader(copy);
        QCOMPARE(reader.runs().size(), std::size_t(2));
    }

    // A real schema-1 file (before the phase table): refused as older, and its migrated copy
    // opens with every run and no phases.
    void schemaOneIsMigratedToTheCurrentSchema() {
        const std::string v1 = copyOfGood("schema1.allocscope");
        execOn(v1, "DROP TABLE phase; PRAGMA user_version = 1");
        const std::string before = readAll(v1);
        try {
            storage::SessionReader refused(v1);
            QFAIL("a schema-1 session was opened without migration");
        } catch (const storage::SessionError& e) {
            QVERIFY2(QString::fromStdString(e.what()).contains("older schema 1"), e.what());
        }
        const std::string copy = dir_.filePath("schema1-migrated.allocscope").toStdString();
        storage::SessionSchema::migrateToCopy(v1, copy);
        QCOMPARE(readAll(v1), before);
        storage::SessionReader reader(copy);
        QCOMPARE(reader.runs().size(), std::size_t(2));
        QVERIFY(reader.phases(1).empty());
    }

    // A schema-2 file (heatmaps with active / reserved shares only): refused as older; its
    // migrated copy has every run's heatmap recomputed from the events, identical to the grid a
    // schema-3 recording stores for the same run.
    void schemaTwoHeatmapsAreRecomputed() {
        const std::string v2 = copyOfGood("schema2.allocscope");
        storagetest::rewriteAsSchemaTwo(v2);
        const std::string before = readAll(v2);
        try {
            storage::SessionReader refused(v2);
            QFAIL("a schema-2 session was opened without migration");
        } catch (const storage::SessionError& e) {
            QVERIFY2(QString::fromStdString(e.what()).contains("older schema 2"), e.what());
            QVERIFY2(QString::fromStdString(e.what()).contains("allocscope-cli migrate"), e.what());
        }
        const std::string copy = dir_.filePath("schema2-migrated.allocscope").toStdString();
        storage::SessionSchema::migrateToCopy(v2, copy);
        QCOMPARE(readAll(v2), before);
        QVERIFY(!sidecarsPresent(v2));
        storage::SessionReader migrated(copy);
        storage::SessionReader original(good_);
        QCOMPARE(migrated.runs().size(), std::size_t(2));
        for (int run : {1, 2}) {
            const auto want = storage::HeatmapQuery::stored(original, run);
            const auto got = storage::HeatmapQuery::stored(migrated, run);
            QVERIFY(want && got);
            QCOMPARE(got->columnEvents, want->columnEvents);
            QCOMPARE(got->axisBytes, want->axisBytes);
            QCOMPARE(got->rows, want->rows);
            for (int s = 0; s < storage::kHeatShareCount; ++s) QVERIFY(got->shares[s] == want->shares[s]);
        }
    }

    // The 2 -> 3 step replays every run: it reports its progress up to the total, and a
    // cancel from the progress callback stops it with no copy left behind.
    void migrationReportsProgressAndCanBeCancelled() {
        const std::string v2 = copyOfGood("schema2-progress.allocscope");
        storagetest::rewriteAsSchemaTwo(v2);
        const std::string copy = dir_.filePath("schema2-progress-migrated.allocscope").toStdString();
        std::vector<std::pair<std::uint64_t, std::uint64_t>> reports;
        storage::SessionSchema::migrateToCopy(v2, copy, [&](std::uint64_t done, std::uint64_t total) {
            reports.emplace_back(done, total);
            return true;
        });
        QVERIFY(reports.size() >= 2);
        QCOMPARE(reports.back().first, reports.back().second);
        QCOMPARE(reports.back().second, std::uint64_t(storage::SessionReader(good_).run(1).eventCount + storage::SessionReader(good_).run(2).eventCount));
        for (std::size_t i = 1; i < reports.size(); ++i) QVERIFY(reports[i].first >= reports[i - 1].first);

        const std::string cancelled = dir_.filePath("schema2-cancelled.allocscope").toStdString();
        int calls = 0;
        try {
            storage::SessionSchema::migrateToCopy(v2, cancelled, [&](std::uint64_t, std::uint64_t) { return ++calls < 2; });
            QFAIL("a cancelled migration finished");
        } catch (const storage::SessionError& e) {
            QVERIFY2(QString::fromStdString(e.what()).contains("cancelled"), e.what());
        }
        QCOMPARE(calls, 2);
        QVERIFY(!std::filesystem::exists(cancelled));
        QVERIFY(!sidecarsPresent(cancelled));
    }

    // A heatmap whose share planes are cut short or run past their cells: the query says the
    // file is damaged instead of reading out of bounds or drawing garbage.
    void damagedHeatmapSharesAreRefused() {
        for (const char* sql : {"UPDATE heatmap SET shares = substr(shares, 1, length(shares) - 1) WHERE run = 1",
                                "UPDATE heatmap SET shares = shares || x'00' WHERE run = 1",
                                "UPDATE heatmap SET shares = x'ffffffff0f01' || shares WHERE run = 1"}) {
            const std::string path = copyOfGood("damaged-shares.allocscope");
            execOn(path, sql);
            storage::SessionReader reader(path);
            try {
                storage::HeatmapQuery::stored(reader, 1);
                QFAIL(sql);
            } catch (const storage::SessionError& e) {
                QVERIFY2(QString::fromStdString(e.what()).contains("damaged"), e.what());
            }
            QVERIFY(storage::HeatmapQuery::stored(reader, 2).has_value());  // the other run is intact
            std::filesystem::remove(path);
        }
    }

    // A schema-2 file whose heatmap names events its run does not have: the migration fails
    // with a clear message and leaves no half-written copy.
    void failedMigrationLeavesNoCopy() {
        const std::string v2 = copyOfGood("schema2-bad.allocscope");
        storagetest::rewriteAsSchemaTwo(v2);
        execOn(v2, "UPDATE heatmap SET column_events = x'ffffffff0f' || substr(column_events, 6) WHERE run = 2");
        const std::string before = readAll(v2);
        const std::string copy = dir_.filePath("schema2-bad-migrated.allocscope").toStdString();
        try {
            storage::SessionSchema::migrateToCopy(v2, copy);
            QFAIL("a damaged schema-2 heatmap was migrated");
        } catch (const storage::SessionError& e) {
            QVERIFY2(QString::fromStdString(e.what()).contains("damaged"), e.what());
        }
        QVERIFY(!std::filesystem::exists(copy));
        QVERIFY(!sidecarsPresent(copy));
        QCOMPARE(readAll(v2), before);
    }
};

QTEST_GUILESS_MAIN(TestBadSessions)
#include "TestBadSessions.moc"
