// A bad trace file, as each caller of storage::TraceFile shows it: compare, recommend and replay
// print one `allocscope-cli: <what> (<file>: <where inside>)` line and exit 1; a lesson on a trace
// throws LessonError with the same what and where. One reader, one error, so the file and the
// place inside it read the same everywhere -- and the file is named once. `import` reports it the
// same way and leaves no session (or change to one) behind.
#include <QtTest>

#include <sstream>
#include <string>

#include "tests/FileBytes.h"
#include "app/lessons/LessonError.h"
#include "app/lessons/LessonRunner.h"
#include "tests/cli/InProcessCli.h"

using namespace allocscope;
using clitest::runInProcess;

namespace {

std::string traceData(const char* name) { return std::string(ALLOCSCOPE_TEST_DATA) + "/traces/" + name; }

bool oneLine(const std::string& err) { return !err.empty() && err.find('\n') == err.size() - 1; }

}  // namespace

class TestTraceInputErrors : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::string cutPickle_, badCsv_;


private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        const std::string whole = testfiles::readBytes(traceData("frag101__default.pickle"));
        cutPickle_ = testfiles::writeIn(dir_, "cut.pickle", whole.substr(0, whole.size() / 2));
        std::istringstream good(testfiles::readBytes(traceData("frag101__default.csv")));
        std::string text, line;
        for (int i = 0; i < 4 && std::getline(good, line); ++i) text += line + "\n";
        badCsv_ = testfiles::writeIn(dir_, "bad.csv", text + "1,03:21:13.655690,allocate,0x7f8747e00000\n");  // line 5
    }

    void verbsPrintOneLineNamingFileAndPlace_data() {
        QTest::addColumn<QString>("verb");
        QTest::newRow("compare") << "compare";
        QTest::newRow("recommend") << "recommend";
        QTest::newRow("replay") << "replay";
    }
    void verbsPrintOneLineNamingFileAndPlace() {
        QFETCH(QString, verb);
        const clitest::CliResult pickle = runInProcess({verb.toStdString(), cutPickle_});
        QCOMPARE(pickle.code, 1);
        QVERIFY2(oneLine(pickle.err) && pickle.err.rfind("allocscope-cli: FRAME declares", 0) == 0, pickle.err.c_str());
        QVERIFY2(pickle.err.find("(" + cutPickle_ + ": byte 2)\n") != std::string::npos, pickle.err.c_str());

        const clitest::CliResult csv = runInProcess({verb.toStdString(), badCsv_});
        QCOMPARE(csv.code, 1);
        QVERIFY2(oneLine(csv.err) && csv.err.rfind("allocscope-cli: ", 0) == 0, csv.err.c_str());
        QVERIFY2(csv.err.find("(" + badCsv_ + ": line 5)\n") != std::string::npos, csv.err.c_str());

        const std::string missing = dir_.filePath("missing.pickle").toStdString();
        const clitest::CliResult none = runInProcess({verb.toStdString(), missing});
        QCOMPARE(none.code, 1);
        // compare and recommend say "no such workload, and no trace file there"; replay reads it.
        QVERIFY2(oneLine(none.err) && none.err.find("(" + missing + ")\n") != std::string::npos, none.err.c_str());
        QVERIFY2(none.err.find(missing + ": " + missing) == std::string::npos, none.err.c_str());  // named once
    }

    // `import` of a broken trace names the file and the byte, creates no session for a new --db and
    // leaves an existing session's file byte for byte as it was, without sidecar files.
    void importOfABadTraceLeavesNoSessionBehind() {
        const std::string fresh = dir_.filePath("fresh.allocscope").toStdString();
        const clitest::CliResult intoNew = runInProcess({"import", cutPickle_, "--db", fresh});
        QCOMPARE(intoNew.code, 1);
        QVERIFY2(oneLine(intoNew.err) && intoNew.err.find("(" + cutPickle_ + ": byte 2)\n") != std::string::npos, intoNew.err.c_str());
        QVERIFY(!QFile::exists(QString::fromStdString(fresh)));

        // A file that is not there, or a folder: the path is named once, and no session is made.
        const std::string missing = dir_.filePath("missing.pickle").toStdString();
        for (const std::string& input : {missing, dir_.path().toStdString()}) {
            const clitest::CliResult bad = runInProcess({"import", input, "--db", fresh});
            QCOMPARE(bad.code, 1);
            QVERIFY2(oneLine(bad.err) && bad.err.find("(" + input + ")\n") != std::string::npos, bad.err.c_str());
            QVERIFY2(bad.err.find(input + ": " + input) == std::string::npos, bad.err.c_str());
            QVERIFY(!QFile::exists(QString::fromStdString(fresh)));
        }

        const std::string kept = dir_.filePath("kept.allocscope").toStdString();
        QCOMPARE(runInProcess({"import", traceData("frag101__default.pickle"), "--db", kept}).code, 0);
        const std::string before = testfiles::readBytes(kept);
        QVERIFY(!before.empty());
        const clitest::CliResult intoOld = runInProcess({"import", cutPickle_, "--db", kept});
        QCOMPARE(intoOld.code, 1);
        QVERIFY2(intoOld.err.find("(" + cutPickle_ + ": byte 2)\n") != std::string::npos, intoOld.err.c_str());
        QVERIFY(testfiles::readBytes(kept) == before);
        QVERIFY(!QFile::exists(QString::fromStdString(kept + "-wal")));
        QVERIFY(!QFile::exists(QString::fromStdString(kept + "-journal")));
    }

    void lessonOnABadTraceSaysWhatAndWhere() {
        app::Lesson lesson;
        lesson.name = "bad-trace";
        lesson.file = "bad-trace.json";
        lesson.program.kind = app::LessonProgram::Kind::Trace;
        lesson.program.trace = "bad.csv";
        lesson.program.tracePath = badCsv_;
        app::LessonRun run;
        run.id = "A";
        lesson.runs.push_back(run);
        try {
            app::LessonRunner::run(lesson);
            QFAIL("a lesson ran on a bad trace");
        } catch (const app::LessonError& e) {
            QVERIFY2(!e.problem().empty() && e.problem().find(badCsv_) == std::string::npos, e.what());
            QCOMPARE(e.location(), badCsv_ + ": line 5");
        }
    }
};

QTEST_GUILESS_MAIN(TestTraceInputErrors)
#include "TestTraceInputErrors.moc"
