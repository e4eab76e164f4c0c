// `allocscope-cli migrate OLD NEW`: a schema-1 session becomes a current one with every run, the
// old file stays byte-identical with no sidecar beside it; an existing NEW, a current, newer,
// foreign or garbage OLD are refused with one line and nothing is written; a migration that fails
// half way leaves no NEW behind. Written against storage::kSchemaVersion, not a literal, so the
// suite holds whatever the current schema is.
#include <QtTest>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/FileBytes.h"
#include "storage/session/SchemaVersion.h"
#include "storage/session/SessionReader.h"
#include "storage/session/SqliteDb.h"
#include "tests/cli/InProcessCli.h"
#include "tests/storage/SchemaTwoFile.h"

using namespace allocscope;
using clitest::CliResult;
using clitest::runInProcess;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

bool exists(const std::string& path) {
    std::error_code ec;
    return std::filesystem::exists(path, ec);
}

bool sidecarsBeside(const std::string& path) {
    return exists(path + "-wal") || exists(path + "-shm") || exists(path + "-journal");
}

void execOn(const std::string& path, const std::string& sql) {
    storage::SqliteDb db(path, storage::SqliteDb::Mode::ReadWriteCreate);
    db.exec(sql);
}

}  // namespace

class TestMigrateVerb : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::string good_;  // a current-schema session with three runs (the demo)

    std::string path(const std::string& name) const { return dir_.filePath(QString::fromStdString(name)).toStdString(); }
    std::string copyOfGood(const std::string& name) const {
        const std::string p = path(name);
        std::filesystem::copy_file(good_, p);
        return p;
    }
    // A file as the first AllocScope release wrote it: no phase table, user_version 1.
    std::string schemaOne(const std::string& name) const {
        const std::string p = copyOfGood(name);
        execOn(p, "DROP TABLE phase; PRAGMA user_version = 1");
        return p;
    }
    std::string make(const std::string& name, const std::string& bytes) const {
        const std::string p = path(name);
        std::ofstream(p, std::ios::binary) << bytes;
        return p;
    }

    // The refusal every bad case shares: exit 1, one line naming the file, nothing written.
    void checkRefused(const CliResult& r, const std::string& where, const std::string& says, const std::string& target) {
        QCOMPARE(r.code, 1);
        QVERIFY2(r.out.empty(), r.out.c_str());
        QVERIFY2(r.err.rfind("allocscope-cli: ", 0) == 0, r.err.c_str());
        QVERIFY2(contains(r.err, says), r.err.c_str());
        QVERIFY2(contains(r.err, "(" + where + ")"), r.err.c_str());
        QCOMPARE(std::count(r.err.begin(), r.err.end(), '\n'), std::ptrdiff_t(1));
        QVERIFY(!exists(target));
        QVERIFY(!sidecarsBeside(target));
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        good_ = path("good.allocscope");
        const CliResult r = runInProcess({"demo", "--db", good_});
        QCOMPARE(r.code, 0);
    }

    void schemaOneIsMigratedIntoANewFile() {
        const std::string old = schemaOne("v1.allocscope");
        const std::string before = testfiles::readBytes(old);
        const std::string target = path("v1-migrated.allocscope");
        // The old file is refused as it is.
        const CliResult refused = runInProcess({"info", old});
        QCOMPARE(refused.code, 1);
        QVERIFY2(contains(refused.err, "older schema 1"), refused.err.c_str());

        const CliResult r = runInProcess({"migrate", old, target});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.err.empty(), r.err.c_str());
        QCOMPARE(r.out, "migrated " + old + " from schema 1 to schema " + std::to_string(storage::kSchemaVersion) +
                            " into " + target + " (3 runs)\n");
        QCOMPARE(testfiles::readBytes(old), before);
        QVERIFY(!sidecarsBeside(old));
        QVERIFY(!sidecarsBeside(target));

        const CliResult info = runInProcess({"info", target});
        QCOMPARE(info.code, 0);
        QVERIFY2(contains(info.out, "(schema " + std::to_string(storage::kSchemaVersion) + "), 3 runs"), info.out.c_str());
        // Every run came across whole: the same runs, events and summaries as the session the
        // schema-1 file was made from.
        storage::SessionReader migrated(target);
        storage::SessionReader original(good_);
        const auto got = migrated.runs();
        const auto want = original.runs();
        QCOMPARE(got.size(), want.size());
        for (std::size_t i = 0; i < got.size(); ++i) {
            QCOMPARE(got[i].info.name, want[i].info.name);
            QCOMPARE(got[i].info.config, want[i].info.config);
            QCOMPARE(got[i].eventCount, want[i].eventCount);
            QVERIFY(got[i].summary.has_value());
            QCOMPARE(got[i].summary->peakReserved, want[i].summary->peakReserved);
            QCOMPARE(static_cast<std::uint64_t>(migrated.events(got[i].number, 0, 100000).events.size()), want[i].eventCount);
        }
    }

    // The step every user file of the previous release takes: schema 2 (heatmaps with active /
    // reserved shares only) to 3. The file is reshaped from a current one, so this case only holds
    // while 3 is the current schema.
    void schemaTwoIsMigratedIntoANewFile() {
        if (storage::kSchemaVersion != 3) QSKIP("reshapes a schema-3 file into schema 2");
        const std::string old = copyOfGood("v2.allocscope");
        storagetest::rewriteAsSchemaTwo(old);
        const std::string before = testfiles::readBytes(old);
        const std::string target = path("v2-migrated.allocscope");
        const CliResult r = runInProcess({"migrate", old, target});
        QCOMPARE(r.code, 0);
        QCOMPARE(r.out, "migrated " + old + " from schema 2 to schema 3 into " + target + " (3 runs)\n");
        QCOMPARE(testfiles::readBytes(old), before);
        QVERIFY(!sidecarsBeside(old));
        const CliResult info = runInProcess({"info", target});
        QCOMPARE(info.code, 0);
        QVERIFY2(contains(info.out, "(schema 3), 3 runs"), info.out.c_str());
    }

    void anExistingTargetIsNeverTouched() {
        const std::string old = schemaOne("v1-existing.allocscope");
        const std::string target = make("taken.allocscope", "someone's notes\n");
        const CliResult r = runInProcess({"migrate", old, target});
        QCOMPARE(r.code, 1);
        QVERIFY2(contains(r.err, "already exists"), r.err.c_str());
        QVERIFY2(contains(r.err, "(" + target + ")"), r.err.c_str());
        QCOMPARE(testfiles::readBytes(target), std::string("someone's notes\n"));
        QVERIFY(!sidecarsBeside(target));
        // Nor when NEW is OLD itself.
        const std::string before = testfiles::readBytes(old);
        const CliResult self = runInProcess({"migrate", old, old});
        QCOMPARE(self.code, 1);
        QCOMPARE(testfiles::readBytes(old), before);
        QVERIFY(!sidecarsBeside(old));
    }

    void aCurrentSessionNeedsNoMigration() {
        const std::string current = copyOfGood("current.allocscope");
        const std::string before = testfiles::readBytes(current);
        const std::string target = path("current-copy.allocscope");
        const CliResult r = runInProcess({"migrate", current, target});
        checkRefused(r, current, "already has the current schema " + std::to_string(storage::kSchemaVersion), target);
        QCOMPARE(testfiles::readBytes(current), before);
        QVERIFY(!sidecarsBeside(current));
    }

    void badSourcesAreRefused_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("says");
        QTest::newRow("garbage") << QString::fromStdString(make("garbage.allocscope", std::string(4096, '\x5a')))
                                 << "not an AllocScope session (not a SQLite database)";
        QTest::newRow("empty") << QString::fromStdString(make("empty.allocscope", "")) << "empty file";
        QTest::newRow("missing") << QString::fromStdString(path("missing.allocscope")) << "no such session file";
        const std::string other = path("other.sqlite");
        execOn(other, "CREATE TABLE photos(id INTEGER PRIMARY KEY, name TEXT)");
        QTest::newRow("other application") << QString::fromStdString(other) << "a SQLite database of another application";
        const std::string newer = copyOfGood("newer.allocscope");
        execOn(newer, "PRAGMA user_version = " + std::to_string(storage::kSchemaVersion + 1));
        QTest::newRow("newer schema") << QString::fromStdString(newer)
                                      << QString("newer AllocScope (schema %1").arg(storage::kSchemaVersion + 1);
    }

    void badSourcesAreRefused() {
        QFETCH(QString, file);
        QFETCH(QString, says);
        const std::string source = file.toStdString();
        const std::string before = testfiles::readBytes(source);
        const std::string target = path("from-" + QFileInfo(file).fileName().toStdString());
        const CliResult r = runInProcess({"migrate", source, target});
        checkRefused(r, source, says.toStdString(), target);
        QCOMPARE(testfiles::readBytes(source), before);
        QVERIFY(!sidecarsBeside(source));
    }

    // An older file whose pages are damaged: the migration starts, fails, and the partly written
    // copy is removed.
    void aFailedMigrationLeavesNoCopy() {
        const std::string old = schemaOne("v1-damaged.allocscope");
        std::string bytes = testfiles::readBytes(old);
        const std::size_t page = 4096;
        QVERIFY(bytes.size() > 8 * page);
        std::uint32_t x = 12345;
        for (std::size_t p = 2; p + 1 < bytes.size() / page; p += 2) {
            for (std::size_t i = 0; i < page; ++i) {
                x = x * 1664525u + 1013904223u;
                bytes[p * page + i] = static_cast<char>(x >> 24);
            }
        }
        std::ofstream(old, std::ios::binary | std::ios::trunc) << bytes;
        const std::string target = path("v1-damaged-migrated.allocscope");
        const CliResult r = runInProcess({"migrate", old, target});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.rfind("allocscope-cli: ", 0) == 0, r.err.c_str());
        QCOMPARE(std::count(r.err.begin(), r.err.end(), '\n'), std::ptrdiff_t(1));
        QVERIFY(!exists(target));
        QVERIFY(!sidecarsBeside(target));
        QCOMPARE(testfiles::readBytes(old), bytes);
        QVERIFY(!sidecarsBeside(old));
    }

    void aTargetInAMissingFolderIsRefused() {
        const std::string old = schemaOne("v1-nofolder.allocscope");
        const std::string target = path("no/such/folder/new.allocscope");
        const CliResult r = runInProcess({"migrate", old, target});
        checkRefused(r, target, "folder of the migration target does not exist", target);
    }

    void usageErrors() {
        const CliResult none = runInProcess({"migrate"});
        QCOMPARE(none.code, 2);
        QVERIFY2(contains(none.err, "usage: allocscope-cli migrate OLD NEW"), none.err.c_str());
        QCOMPARE(runInProcess({"migrate", path("a.allocscope")}).code, 2);
        QCOMPARE(runInProcess({"migrate", "a", "b", "c"}).code, 2);
        const CliResult option = runInProcess({"migrate", "--force", "a", "b"});
        QCOMPARE(option.code, 2);
        QVERIFY2(contains(option.err, "unknown option '--force'"), option.err.c_str());
        const CliResult help = runInProcess({"migrate", "--help"});
        QCOMPARE(help.code, 0);
        QVERIFY2(help.out.rfind("usage: allocscope-cli migrate OLD NEW", 0) == 0, help.out.c_str());
        const CliResult helpVerb = runInProcess({"help", "migrate"});
        QCOMPARE(helpVerb.code, 0);
        QCOMPARE(helpVerb.out, help.out);
        const CliResult list = runInProcess({"help"});
        QVERIFY2(contains(list.out, "  migrate "), list.out.c_str());
    }
};

QTEST_GUILESS_MAIN(TestMigrateVerb)
#include "TestMigrateVerb.moc"
