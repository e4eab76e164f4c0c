// RMM CSV logs: the twelve shared CSVs, byte-exact rewrite, what the reader tolerates, and the
// consistency errors an import must refuse (with line numbers).
#include <QtTest>

#include "storage/formats/FormatError.h"
#include "storage/formats/RmmCsvReader.h"
#include "storage/formats/RmmCsvWriter.h"
#include "storage/formats/RmmLogValidator.h"
#include "storage/formats/SnapshotReader.h"
#include "tests/formats/FormatsTestData.h"

using namespace allocscope::formats;

#define EXPECT_CSV_ERROR(input, needle, where)                                                      \
    do {                                                                                            \
        bool thrown_ = false;                                                                       \
        try {                                                                                       \
            RmmCsvReader::read(input);                                                              \
        } catch (const FormatError& e) {                                                            \
            thrown_ = true;                                                                         \
            QVERIFY2(std::string(e.what()).find(needle) != std::string::npos, e.what());            \
            QCOMPARE(QString::fromStdString(e.location()), QString(where));                         \
        }                                                                                           \
        QVERIFY2(thrown_, "expected a FormatError");                                                \
    } while (0)

namespace {
const std::string kHeader = "Thread,Time,Action,Pointer,Size,Stream\n";
const std::string kAlloc = "1,00:00:00.000001,allocate,0x7f0000000000,4096,0\n";
}  // namespace

class TestRmmCsv : public QObject {
    Q_OBJECT

private slots:
    void realLogs_data();
    void realLogs();
    void firstRecordExactly();
    void bomCrlfAndBlankLines();
    void columnsByName();
    void decimalAndHexNumbers();
    void allocateFailure();
    void syntaxErrors_data();
    void syntaxErrors();
    void consistencyErrors_data();
    void consistencyErrors();
    void parseSkipsConsistency();
    void tenMegabyteLine();
    void writerRefusesUnwritableTime();
};

void TestRmmCsv::realLogs_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<int>("allocates");
    QTest::addColumn<int>("frees");
    // From the files: grep -c ',allocate,' / ',free,'.
    for (const char* n : {"frag101__default", "frag101__expandable", "frag101__gc06_msplit256", "frag101__msplit128", "frag101__rup4"}) {
        QTest::newRow(n) << QString(n) << 152 << 152;
    }
    for (const char* n : {"kv_growth_limited__default", "kv_growth_limited__expandable"}) QTest::newRow(n) << QString(n) << 480 << 480;
    for (const char* n : {"train_gpt__default", "train_gpt__expandable", "train_gpt__gc06_msplit256", "train_gpt__msplit128", "train_gpt__rup4"}) {
        QTest::newRow(n) << QString(n) << 2690 << 2687;
    }
}

void TestRmmCsv::realLogs() {
    QFETCH(QString, name);
    QFETCH(int, allocates);
    QFETCH(int, frees);
    const std::string text = formats_test::bytes("traces/" + name + ".csv");
    const RmmLog log = RmmCsvReader::read(text);
    int a = 0, f = 0;
    for (const RmmRecord& r : log.records) {
        a += r.action == RmmAction::Allocate;
        f += r.action == RmmAction::Free;
    }
    QCOMPARE(a, allocates);
    QCOMPARE(f, frees);
    QCOMPARE(log.records.back().line, uint64_t(allocates + frees + 1));
    // Writing it again gives the same bytes.
    QCOMPARE(RmmCsvWriter::write(log), text);
    // The CSV is the pickle's trace: allocate <-> alloc, free <-> free_completed, same order.
    const Snapshot snap = SnapshotReader::readFile(formats_test::dataPath("traces/" + name + ".pickle"));
    size_t i = 0;
    for (const TraceEntry& e : snap.device_traces[0]) {
        if (e.action != "alloc" && e.action != "free_completed") continue;
        QVERIFY(i < log.records.size());
        QCOMPARE(log.records[i].pointer, e.addr);
        QCOMPARE(log.records[i].size, e.size);
        QCOMPARE(log.records[i].action, e.action == "alloc" ? RmmAction::Allocate : RmmAction::Free);
        ++i;
    }
    QCOMPARE(i, log.records.size());
}

void TestRmmCsv::firstRecordExactly() {
    const RmmLog log = RmmCsvReader::readFile(formats_test::dataPath("traces/frag101__default.csv"));
    const RmmRecord& r = log.records.front();
    QCOMPARE(r.thread, uint64_t(1));
    QCOMPARE(r.time, std::string("03:21:13.655690"));
    QCOMPARE(r.action, RmmAction::Allocate);
    QCOMPARE(r.pointer, uint64_t(0x7f8747e00000));
    QCOMPARE(r.size, uint64_t(4096));
    QCOMPARE(r.stream, uint64_t(0));
    QCOMPARE(r.line, uint64_t(2));
}

void TestRmmCsv::bomCrlfAndBlankLines() {
    const std::string text = "\xEF\xBB\xBFThread,Time,Action,Pointer,Size,Stream\r\n\r\n" +
                             std::string("1,t1,allocate,0x10,16,0\r\n\r\n1,t2,free,0x10,16,0");  // no final newline
    const RmmLog log = RmmCsvReader::read(text);
    QCOMPARE(log.records.size(), size_t(2));
    QCOMPARE(log.records[0].time, std::string("t1"));
    QCOMPARE(log.records[0].line, uint64_t(3));
    QCOMPARE(log.records[1].line, uint64_t(5));
    QCOMPARE(log.records[1].stream, uint64_t(0));
}

void TestRmmCsv::columnsByName() {
    // Reordered columns, different case, spaces, an extra named column (ignored).
    const RmmLog log = RmmCsvReader::read(" size , POINTER,Action,Time,Stream,Thread,Device\n"
                                          "16, 0x20 ,allocate,t,7,3,0\n");
    QCOMPARE(log.records.size(), size_t(1));
    QCOMPARE(log.records[0].size, uint64_t(16));
    QCOMPARE(log.records[0].pointer, uint64_t(0x20));
    QCOMPARE(log.records[0].stream, uint64_t(7));
    QCOMPARE(log.records[0].thread, uint64_t(3));
}

void TestRmmCsv::decimalAndHexNumbers() {
    const RmmLog log = RmmCsvReader::parse(kHeader + "140737488355328,t,allocate,139637976727552,18446744073709551615,0x7fff\n"
                                                    "0x1,t,free,0x7F0000000000,18446744073709551615,140737488355327\n");
    QCOMPARE(log.records[0].thread, uint64_t(140737488355328));
    QCOMPARE(log.records[0].pointer, uint64_t(0x7f0000000000));
    QCOMPARE(log.records[1].pointer, uint64_t(0x7f0000000000));
    QCOMPARE(log.records[0].size, UINT64_MAX);
    QCOMPARE(log.records[0].stream, uint64_t(0x7fff));
    QCOMPARE(log.records[1].stream, uint64_t(140737488355327));
}

void TestRmmCsv::allocateFailure() {
    const RmmLog log = RmmCsvReader::read(kHeader + "1,t,allocate failure,0x0,1099511627776,0\n");
    QCOMPARE(log.records[0].action, RmmAction::AllocateFailure);
    QCOMPARE(log.records[0].size, uint64_t(1) << 40);
    QCOMPARE(RmmCsvWriter::write(log), kHeader + "1,t,allocate failure,0x0,1099511627776,0\n");
}

void TestRmmCsv::syntaxErrors_data() {
    QTest::addColumn<QByteArray>("csv");
    QTest::addColumn<QString>("needle");
    QTest::addColumn<QString>("where");
    auto row = [](const char* name, const std::string& csv, const char* needle, const char* where) {
        QTest::newRow(name) << QByteArray(csv.data(), static_cast<int>(csv.size())) << needle << where;
    };
    row("empty", "", "empty file", "line 1");
    row("missing header", kAlloc, "missing header", "line 1");
    row("duplicate column", "Thread,Time,Action,Pointer,Size,Size,Stream\n", "appears twice", "line 1");
    row("extra field", kHeader + kAlloc + "1,t,free,0x7f0000000000,4096,0,x\n", "7 fields, but the header has 6", "line 3");
    row("missing field", kHeader + "1,t,allocate,0x10,16\n", "5 fields", "line 2");
    row("negative size", kHeader + "1,t,allocate,0x10,-16,0\n", "negative Size", "line 2");
    row("huge size", kHeader + "1,t,allocate,0x10,18446744073709551616,0\n", "does not fit in 64 bits", "line 2");
    row("hex size", kHeader + "1,t,allocate,0x10,0x10,0\n", "Size must be decimal", "line 2");
    row("bad pointer", kHeader + "1,t,allocate,0x10g,16,0\n", "invalid Pointer '0x10g'", "line 2");
    row("empty pointer", kHeader + "1,t,allocate,,16,0\n", "empty Pointer", "line 2");
    row("unknown action", kHeader + "1,t,alloc,0x10,16,0\n", "unknown Action 'alloc'", "line 2");
    row("NUL byte", kHeader + std::string("1,t,allocate,0x10", 17) + std::string(1, '\0') + ",16,0\n", "NUL byte at column 18", "line 2");
    row("invalid UTF-8", kHeader + "1,t\xc3,allocate,0x10,16,0\n", "invalid UTF-8 at column 4", "line 2");
    row("quoted", kHeader + "1,\"t\",allocate,0x10,16,0\n", "quoted fields", "line 2");
    row("bare CR inside a line", kHeader + "1,t\r1,allocate,0x10,16,0\n", "control character 13 at column 4", "line 2");
    row("CRLF line numbers", "Thread,Time,Action,Pointer,Size,Stream\r\n1,t,allocate,0x10,16,0\r\n1,t,free,0x10,x,0\r\n",
        "invalid Size 'x'", "line 3");
}

void TestRmmCsv::syntaxErrors() {
    QFETCH(QByteArray, csv);
    QFETCH(QString, needle);
    QFETCH(QString, where);
    EXPECT_CSV_ERROR(csv.toStdString(), needle.toStdString(), where);
}

void TestRmmCsv::consistencyErrors_data() {
    QTest::addColumn<QByteArray>("csv");
    QTest::addColumn<QString>("needle");
    QTest::addColumn<QString>("where");
    auto row = [](const char* name, const std::string& csv, const char* needle, const char* where) {
        QTest::newRow(name) << QByteArray(csv.data(), static_cast<int>(csv.size())) << needle << where;
    };
    row("free unknown", kHeader + kAlloc + "1,t,free,0x7f0000001000,4096,0\n", "free of unknown pointer 0x7f0000001000", "line 3");
    row("double free", kHeader + kAlloc + "1,t,free,0x7f0000000000,4096,0\n1,t,free,0x7f0000000000,4096,0\n",
        "free of unknown pointer 0x7f0000000000", "line 4");
    row("second allocate", kHeader + kAlloc + kAlloc, "second allocate at live address 0x7f0000000000 (allocated at line 2", "line 3");
    row("overlap below", kHeader + kAlloc + "1,t,allocate,0x7effffffff00,512,0\n", "overlaps the live allocation at 0x7f0000000000 (line 2)", "line 3");
    row("inside", kHeader + kAlloc + "1,t,allocate,0x7f0000000800,16,0\n", "inside the live allocation at 0x7f0000000000", "line 3");
    row("size mismatch", kHeader + kAlloc + "1,t,free,0x7f0000000000,16,0\n", "allocated with size 4096 at line 2", "line 3");
    row("null allocate", kHeader + "1,t,allocate,0,16,0\n", "null pointer", "line 2");
    row("past address space", kHeader + "1,t,allocate,0xffffffffffffff00,512,0\n", "past the end of the address space", "line 2");
}

void TestRmmCsv::consistencyErrors() {
    QFETCH(QByteArray, csv);
    QFETCH(QString, needle);
    QFETCH(QString, where);
    EXPECT_CSV_ERROR(csv.toStdString(), needle.toStdString(), where);
}

void TestRmmCsv::parseSkipsConsistency() {
    // parse() is syntax only (e.g. to show a partial log); read() and the validator refuse it.
    const std::string text = kHeader + "1,t,free,0x10,16,0\n";
    QCOMPARE(RmmCsvReader::parse(text).records.size(), size_t(1));
    bool thrown = false;
    try {
        RmmLogValidator::check(RmmCsvReader::parse(text));
    } catch (const FormatError& e) {
        thrown = true;
        QCOMPARE(e.location(), std::string("line 2"));
    }
    QVERIFY(thrown);
    // Re-allocating a freed address is fine.
    QCOMPARE(RmmCsvReader::read(kHeader + kAlloc + "1,t,free,0x7f0000000000,4096,0\n" + kAlloc).records.size(), size_t(3));
}

void TestRmmCsv::tenMegabyteLine() {
    std::string text = kHeader + kAlloc + "1,";
    text.append(10 * 1024 * 1024, 'x');
    text += ",allocate,0x10,16,0\n";
    EXPECT_CSV_ERROR(text, "line is 10485781 bytes long; a record has at most 65536", "line 3");
}

void TestRmmCsv::writerRefusesUnwritableTime() {
    RmmLog log;
    log.records.push_back(RmmRecord{1, "12:00,01", RmmAction::Free, 16, 16, 0, 2});
    bool thrown = false;
    try {
        RmmCsvWriter::write(log);
    } catch (const FormatError& e) {
        thrown = true;
        QCOMPARE(e.location(), std::string("record 1"));
    }
    QVERIFY(thrown);
}

QTEST_GUILESS_MAIN(TestRmmCsv)
#include "TestRmmCsv.moc"
