// storage::TraceFile, the one way a trace file is read for replay, compare, recommend and lessons:
// the format comes from the content (a .txt RMM log is still a log), a name that promises a
// snapshot is held to it, and every bad file is one formats::FormatError whose location names
// the file and, where the reader knows it, the place inside (byte, line, entry) -- exactly.
#include <QtTest>

#include <sstream>
#include <string>

#include "tests/FileBytes.h"
#include "storage/formats/FormatError.h"
#include "storage/import/TraceFile.h"

using namespace allocscope;

namespace {

std::string traceData(const char* name) { return std::string(ALLOCSCOPE_TEST_DATA) + "/traces/" + name; }

}  // namespace

class TestTraceFile : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;


    // The error TraceFile::read throws for `path` (fails the test when it reads the file).
    static formats::FormatError readError(const std::string& path) {
        try {
            storage::TraceFile::read(path);
        } catch (const formats::FormatError& e) {
            return e;
        }
        return formats::FormatError("<read it>", "<no error>");
    }

private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    void readsASnapshotPickle() {
        const storage::TraceFile file = storage::TraceFile::read(traceData("frag101__default.pickle"));
        QCOMPARE(file.format, storage::TraceFormat::Snapshot);
        QCOMPARE(file.traces.size(), std::size_t{1});
        QVERIFY(!file.traces.front().entries.empty());
        QVERIFY(!file.program({}).ops.empty());
    }

    void readsAnRmmLogByContentWhateverItsName() {
        const std::string log = testfiles::writeIn(dir_, "log.txt", testfiles::readBytes(traceData("frag101__default.csv")));
        const storage::TraceFile file = storage::TraceFile::read(log);
        QCOMPARE(file.format, storage::TraceFormat::RmmCsv);
        QCOMPARE(file.traces.size(), std::size_t{1});
        QVERIFY(!file.traces.front().entries.empty());
    }

    void truncatedPickleNamesFileAndByte() {
        const std::string whole = testfiles::readBytes(traceData("frag101__default.pickle"));
        const std::string cut = testfiles::writeIn(dir_, "cut.pickle", whole.substr(0, whole.size() / 2));
        const std::string before = testfiles::readBytes(cut);
        const formats::FormatError e = readError(cut);
        // Protocol 4 frames its opcodes: the FRAME at byte 2 (after PROTO) declares more bytes
        // than the cut file holds, which is where the reader stops.
        QVERIFY2(e.problem().find("FRAME declares") == 0 && e.problem().find("but only") != std::string::npos, e.what());
        QCOMPARE(e.location(), cut + ": byte 2");
        QCOMPARE(std::string(e.what()), e.problem() + " (" + e.location() + ")");
        QCOMPARE(testfiles::readBytes(cut), before);  // input files are only read
    }

    void badCsvLineNamesFileAndLine() {
        // Line 1 is the header, lines 2-4 good records, line 5 the bad one.
        std::istringstream good(testfiles::readBytes(traceData("frag101__default.csv")));
        std::string text, line;
        for (int i = 0; i < 4 && std::getline(good, line); ++i) text += line + "\n";
        text += "1,03:21:13.655690,allocate,0x7f8747e00000\n";
        const std::string csv = testfiles::writeIn(dir_, "bad.csv", text);
        const formats::FormatError e = readError(csv);
        QCOMPARE(e.location(), csv + ": line 5");
        QVERIFY2(!e.problem().empty() && e.problem().find(csv) == std::string::npos, e.what());
    }

    void badSnapshotEntryNamesFileAndEntry() {
        const std::string json = testfiles::writeIn(dir_, 
            "entry.json",
            R"({"segments": [], "device_traces": [[{"action": "alloc", "addr": 4096, "size": 512, "stream": 0, "time_us": 1, "frames": []},)"
            R"( {"action": "teleport", "addr": 4096, "size": 512, "stream": 0, "time_us": 2, "frames": []}]]})");
        const formats::FormatError e = readError(json);
        QCOMPARE(e.problem(), std::string("unknown trace action 'teleport'"));
        QCOMPARE(e.location(), json + ": device_traces[0][1]");
    }

    void missingFileIsNamedOnce() {
        const std::string missing = dir_.filePath("nope.pickle").toStdString();
        const formats::FormatError e = readError(missing);
        QVERIFY2(e.problem().rfind("cannot open file", 0) == 0, e.what());
        QCOMPARE(e.location(), missing);
    }

    void snapshotNameHoldsTheContentToIt() {
        const std::string empty = testfiles::writeIn(dir_, "empty.pickle", "");
        formats::FormatError e = readError(empty);
        QCOMPARE(e.problem(), std::string("the file is empty, not a PyTorch memory snapshot"));
        QCOMPARE(e.location(), empty + ": byte 0");

        const std::string text = testfiles::writeIn(dir_, "notes.pkl", "Thread,Time,Action,Pointer,Size,Stream\n");
        e = readError(text);
        QVERIFY2(e.problem().rfind("not a PyTorch memory snapshot", 0) == 0, e.what());
        QCOMPARE(e.location(), text + ": byte 0");
    }

    void aTraceWithoutEventsIsAnError() {
        // A snapshot with neither events nor segments has no device; an RMM log with only its
        // header has no records.
        for (const std::string& path : {testfiles::writeIn(dir_, "nothing.json", R"({"segments": [], "device_traces": []})"),
                                        testfiles::writeIn(dir_, "header-only.csv", "Thread,Time,Action,Pointer,Size,Stream\n")}) {
            const formats::FormatError e = readError(path);
            QCOMPARE(e.problem(), std::string("the trace holds no allocator events and no segments"));
            QCOMPARE(e.location(), path);
        }
    }

    void loadLeavesNamingTheFileToTheCaller() {
        const std::string whole = testfiles::readBytes(traceData("frag101__default.pickle"));
        const std::string cut = testfiles::writeIn(dir_, "cut-load.pickle", whole.substr(0, 100));
        try {
            storage::TraceFile::load(cut);
            QFAIL("a truncated pickle was loaded");
        } catch (const formats::FormatError& e) {
            QVERIFY2(e.location().rfind("byte ", 0) == 0, e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestTraceFile)
#include "TestTraceFile.moc"
