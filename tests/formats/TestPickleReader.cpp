// The safe pickle VM: value decoding, memo semantics, refusal of code execution, robustness.
#include <QtTest>

#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <tuple>

#include "storage/formats/FormatError.h"
#include "storage/formats/PickleReader.h"
#include "tests/formats/FormatsTestData.h"

using namespace allocscope::formats;
using formats_test::bin;

// Expects PickleReader::read to throw one FormatError containing `needle`, located `where`.
#define EXPECT_PICKLE_ERROR(input, needle, where)                                                   \
    do {                                                                                            \
        bool thrown_ = false;                                                                       \
        try {                                                                                       \
            PickleReader::read(input);                                                              \
        } catch (const FormatError& e) {                                                            \
            thrown_ = true;                                                                         \
            QVERIFY2(std::string(e.what()).find(needle) != std::string::npos, e.what());            \
            QCOMPARE(QString::fromStdString(e.location()), QString(where));                         \
        }                                                                                           \
        QVERIFY2(thrown_, "expected a FormatError");                                                \
    } while (0)

class TestPickleReader : public QObject {
    Q_OBJECT

private slots:
    void scalars();
    void integersAtTheEdges();
    void integersPastTheEdges();
    void memoSharesReferences();
    void protocol2StyleMemo();
    void sparseMemoIndex();
    void selfReferentialList();
    void listFilledInBatchesAroundOtherContainers();
    void deepNesting();
    void refusesCodeExecution_data();
    void refusesCodeExecution();
    void refusesTextProtocols();
    void structuralErrors_data();
    void structuralErrors();
    void hugeDeclaredLengthsDoNotAllocate();
    void invalidUtf8();
    void truncationAtEveryOpcodeBoundary();
    void truncationAtEveryByteOfTheHeadAndTail();
    void trailingBytesAfterStopAreIgnored();
    void aFileReadInBlocksGivesWhatMemoryGives();
    void aFileCutAnywhereFailsAsInMemory();
    void opcodeNames();
};

void TestPickleReader::scalars() {
    // [None, True, False, 7, 300, 70000, -1, 0.6, "hé", b"ab", (1, 2), ()]
    const std::string p = bin("\x80\x04](N\x88\x89K\x07M\x2c\x01J\x70\x11\x01\x00J\xff\xff\xff\xff"
                              "G\x3f\xe3\x33\x33\x33\x33\x33\x33\x8c\x03h\xc3\xa9" "C\x02" "abK\x01K\x02\x86)e.");
    const PyTree t = PickleReader::read(p);
    QCOMPARE(t.kind(t.root), PyKind::List);
    const PyItems v = t.items(t.root);
    QCOMPARE(v.size(), size_t(12));
    QCOMPARE(t.kind(v[0]), PyKind::None);
    QCOMPARE(t.kind(v[1]), PyKind::Bool);
    QCOMPARE(t.node(v[1]).bits, uint64_t(1));
    QCOMPARE(t.node(v[2]).bits, uint64_t(0));
    QCOMPARE(t.node(v[3]).bits, uint64_t(7));
    QCOMPARE(t.node(v[4]).bits, uint64_t(300));
    QCOMPARE(t.node(v[5]).bits, uint64_t(70000));
    QVERIFY(t.node(v[6]).negative);
    QCOMPARE(static_cast<int64_t>(t.node(v[6]).bits), int64_t(-1));
    QCOMPARE(t.kind(v[7]), PyKind::Float);
    QCOMPARE(t.floatValue(v[7]), 0.6);
    QCOMPARE(t.kind(v[8]), PyKind::Str);
    QCOMPARE(t.text(v[8]), std::string("h\xc3\xa9"));
    QCOMPARE(t.kind(v[9]), PyKind::Bytes);
    QCOMPARE(t.text(v[9]), std::string("ab"));
    QCOMPARE(t.kind(v[10]), PyKind::Tuple);
    QCOMPARE(t.items(v[10]).size(), size_t(2));
    QCOMPARE(t.node(t.items(v[10])[1]).bits, uint64_t(2));
    QCOMPARE(t.kind(v[11]), PyKind::Tuple);
    QVERIFY(t.items(v[11]).empty());
}

void TestPickleReader::integersAtTheEdges() {
    // LONG1 as Python writes them: 2^64-1 (9 bytes), 2^63 (9 bytes), -2^63 (8 bytes), 0 (0 bytes),
    // 2^32 (5 bytes); LONG4 with 2 bytes; LONG1 with redundant sign bytes.
    const std::string p = bin("\x80\x04](\x8a\x09\xff\xff\xff\xff\xff\xff\xff\xff\x00"
                              "\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x80\x00"
                              "\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x80"
                              "\x8a\x00"
                              "\x8a\x05\x00\x00\x00\x00\x01"
                              "\x8b\x02\x00\x00\x00\xff\x7f"
                              "\x8a\x0c\xfe\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"
                              "e.");
    const PyTree t = PickleReader::read(p);
    const PyItems v = t.items(t.root);
    QCOMPARE(v.size(), size_t(7));
    QCOMPARE(t.node(v[0]).bits, std::numeric_limits<uint64_t>::max());
    QVERIFY(!t.node(v[0]).negative);
    QCOMPARE(t.node(v[1]).bits, uint64_t(1) << 63);
    QVERIFY(!t.node(v[1]).negative);
    QCOMPARE(static_cast<int64_t>(t.node(v[2]).bits), std::numeric_limits<int64_t>::min());
    QVERIFY(t.node(v[2]).negative);
    QCOMPARE(t.node(v[3]).bits, uint64_t(0));
    QCOMPARE(t.node(v[4]).bits, uint64_t(1) << 32);
    QCOMPARE(t.node(v[5]).bits, uint64_t(0x7fff));
    QVERIFY(t.node(v[6]).negative);
    QCOMPARE(static_cast<int64_t>(t.node(v[6]).bits), int64_t(-2));
}

void TestPickleReader::integersPastTheEdges() {
    EXPECT_PICKLE_ERROR(bin("\x80\x04\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\x01."), "does not fit in 64 bits", "byte 2");
    // -2^63 - 1 = 0xff7fffffffffffffff as 9 bytes LE
    EXPECT_PICKLE_ERROR(bin("\x80\x04\x8a\x09\xff\xff\xff\xff\xff\xff\xff\x7f\xff."), "below -2^63", "byte 2");
    EXPECT_PICKLE_ERROR(bin("\x80\x04\x8b\x0a\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01."),
                        "does not fit in 64 bits", "byte 2");
}

void TestPickleReader::memoSharesReferences() {
    // Python memoises a dict while it is still empty and fills it later; the list must see the
    // filled dict: l = [d]; d["k"] = 1  ->  [{"k": 1}]
    const std::string p = bin("\x80\x04]\x94}\x94" "a0h\x01\x8c\x01kK\x01s0h\x00.");
    const PyTree t = PickleReader::read(p);
    QCOMPARE(t.kind(t.root), PyKind::List);
    QCOMPARE(t.items(t.root).size(), size_t(1));
    const PyRef d = t.items(t.root)[0];
    PyRef v = 0;
    QVERIFY(t.find(d, "k", v));
    QCOMPARE(t.node(v).bits, uint64_t(1));
}

void TestPickleReader::protocol2StyleMemo() {
    // PyTorch's JIT pickler: BINPUT/LONG_BINPUT with explicit indices, BINUNICODE, 8-byte LONG1.
    const std::string p = bin("\x80\x02}q\x00(X\x04\x00\x00\x00" "addrq\x01\x8a\x08\x00\x10\x00\x00\x00\x7f\x00\x00"
                              "X\x01\x00\x00\x00kr\x00\x01\x00\x00h\x01u.");
    const PyTree t = PickleReader::read(p);
    PyRef v = 0;
    QVERIFY(t.find(t.root, "addr", v));
    QCOMPARE(t.node(v).bits, uint64_t(0x7f0000001000));
    QVERIFY(t.find(t.root, "k", v));
    QCOMPARE(t.text(v), std::string("addr"));
}

void TestPickleReader::sparseMemoIndex() {
    // A huge sparse memo index must neither allocate 4 billion slots nor fail.
    const std::string p = bin("\x80\x04\x8c\x01xr\xfe\xff\xff\xff" "0j\xfe\xff\xff\xff.");
    const PyTree t = PickleReader::read(p);
    QCOMPARE(t.text(t.root), std::string("x"));
}

void TestPickleReader::selfReferentialList() {
    // l = []; l.append(l): the list contains itself; loading, using and destroying it must not loop.
    const std::string p = bin("\x80\x04]\x94h\x00" "a.");
    const PyTree t = PickleReader::read(p);
    QCOMPARE(t.kind(t.root), PyKind::List);
    QCOMPARE(t.items(t.root).size(), size_t(1));
    QCOMPARE(t.items(t.root)[0], t.root);
}

void TestPickleReader::listFilledInBatchesAroundOtherContainers() {
    // [1, {2: 3}, 4, {5: 6}, 7] as Python pickles a long list: APPENDS in batches, each batch's
    // dict filled before the batch lands, so the list's items are not stored in one run.
    const std::string p = bin("\x80\x04](K\x01}(K\x02K\x03ue(K\x04}(K\x05K\x06ue(K\x07" "e.");
    const PyTree t = PickleReader::read(p);
    const PyItems v = t.items(t.root);
    QCOMPARE(v.size(), size_t(5));
    QCOMPARE(t.node(v[0]).bits, uint64_t(1));
    QCOMPARE(t.node(v[2]).bits, uint64_t(4));
    QCOMPARE(t.node(v[4]).bits, uint64_t(7));
    for (const auto& [at, key, value] : {std::tuple{1, 2, 3}, std::tuple{3, 5, 6}}) {
        QCOMPARE(t.kind(v[at]), PyKind::Dict);
        const PyItems d = t.items(v[at]);
        QCOMPARE(d.size(), size_t(2));
        QCOMPARE(t.node(d[0]).bits, uint64_t(key));
        QCOMPARE(t.node(d[1]).bits, uint64_t(value));
    }
}

void TestPickleReader::deepNesting() {
    // A million nested lists ([[[...]]]): built and destroyed without recursion.
    const size_t depth = 1000000;
    std::string p = bin("\x80\x04");
    p.append(depth, ']');
    p.append(depth - 1, 'a');
    p.push_back('.');
    const PyTree t = PickleReader::read(p);
    size_t levels = 1;
    PyRef r = t.root;
    while (!t.items(r).empty()) {
        r = t.items(r)[0];
        ++levels;
    }
    QCOMPARE(levels, depth);
}

void TestPickleReader::refusesCodeExecution_data() {
    QTest::addColumn<QByteArray>("pickle");
    QTest::addColumn<QString>("opcode");
    QTest::addColumn<QString>("where");
    auto row = [](const char* name, std::string bytes, const char* op, const char* where) {
        QTest::newRow(name) << QByteArray(bytes.data(), static_cast<int>(bytes.size())) << op << where;
    };
    row("GLOBAL", bin("\x80\x02\x63os\nsystem\n."), "GLOBAL", "byte 2");
    row("STACK_GLOBAL", bin("\x80\x04\x8c\x02os\x8c\x06system\x93."), "STACK_GLOBAL", "byte 14");
    row("REDUCE", bin("\x80\x04N)R."), "REDUCE", "byte 4");
    row("BUILD", bin("\x80\x04}}b."), "BUILD", "byte 4");
    row("NEWOBJ", bin("\x80\x04N)\x81."), "NEWOBJ", "byte 4");
    row("NEWOBJ_EX", bin("\x80\x04N)}\x92."), "NEWOBJ_EX", "byte 5");
    row("INST", bin("(ibuiltins\nobject\n."), "INST", "byte 1");
    row("OBJ", bin("\x80\x04(N)o."), "OBJ", "byte 5");
    row("EXT2", bin("\x80\x04\x83\x01\x00."), "EXT2", "byte 2");
    row("PERSID", bin("Pid\n."), "PERSID", "byte 0");
    row("BINPERSID", bin("\x80\x04NQ."), "BINPERSID", "byte 3");
    row("NEXT_BUFFER", bin("\x80\x05\x97."), "NEXT_BUFFER", "byte 2");
    row("READONLY_BUFFER", bin("\x80\x05N\x98."), "READONLY_BUFFER", "byte 3");
    row("FROZENSET", bin("\x80\x04(\x91."), "FROZENSET", "byte 3");
}

void TestPickleReader::refusesCodeExecution() {
    QFETCH(QByteArray, pickle);
    QFETCH(QString, opcode);
    QFETCH(QString, where);
    EXPECT_PICKLE_ERROR(pickle.toStdString(), ("opcode " + opcode.toStdString() + " "), where);
}

void TestPickleReader::refusesTextProtocols() {
    // pickle.dumps({"a": 1}, protocol=0): MARK, DICT, PUT ... the first text opcode is refused.
    EXPECT_PICKLE_ERROR(bin("(dp0\nVa\np1\nI1\ns."), "protocol 0/1 text opcode PUT", "byte 2");
    EXPECT_PICKLE_ERROR(bin("I1\n."), "protocol 0/1 text opcode INT", "byte 0");
    EXPECT_PICKLE_ERROR(bin("U\x01x."), "protocol 0/1 text opcode SHORT_BINSTRING", "byte 0");
    EXPECT_PICKLE_ERROR(bin("\x80\x01}."), "unsupported pickle protocol 1", "byte 0");
    EXPECT_PICKLE_ERROR(bin("\x80\x06}."), "unsupported pickle protocol 6", "byte 0");
    // Protocol 5, as Python 3.14 writes by default, is accepted.
    QCOMPARE(PickleReader::read(bin("\x80\x05}.")).kind(0), PyKind::Dict);
}

void TestPickleReader::structuralErrors_data() {
    QTest::addColumn<QByteArray>("pickle");
    QTest::addColumn<QString>("needle");
    QTest::addColumn<QString>("where");
    auto row = [](const char* name, std::string bytes, const char* needle, const char* where) {
        QTest::newRow(name) << QByteArray(bytes.data(), static_cast<int>(bytes.size())) << needle << where;
    };
    row("empty", "", "empty input", "byte 0");
    row("no STOP", bin("\x80\x04}"), "no STOP", "byte 3");
    row("SETITEMS without MARK", bin("\x80\x04}K\x01K\x02u."), "SETITEMS without a preceding MARK", "byte 7");
    row("APPENDS without MARK", bin("\x80\x04]K\x01" "e."), "APPENDS without a preceding MARK", "byte 5");
    row("odd SETITEMS", bin("\x80\x04}(K\x01u."), "odd number", "byte 6");
    row("SETITEM into list", bin("\x80\x04]K\x01K\x02s."), "SETITEM into a list, not a dict", "byte 7");
    row("APPEND to dict", bin("\x80\x04}K\x01" "a."), "APPEND to a dict, not a list", "byte 5");
    row("APPEND to tuple", bin("\x80\x04)K\x01" "a."), "APPEND to a tuple", "byte 5");
    row("unhashable key", bin("\x80\x04}(]K\x01u."), "unhashable dict key (a list)", "byte 7");
    row("underflow APPEND", bin("\x80\x04" "a."), "stack underflow", "byte 2");
    row("underflow STOP", bin("\x80\x04."), "stack underflow", "byte 2");
    row("underflow DUP", bin("\x80\x04" "2."), "stack underflow", "byte 2");
    row("underflow TUPLE2", bin("\x80\x04K\x01\x86."), "stack underflow", "byte 4");
    row("MARK hides the stack", bin("\x80\x04](K\x01" "a."), "stack underflow", "byte 6");
    row("memo never stored", bin("\x80\x04h\x05."), "memo index 5 was never stored", "byte 2");
    row("memo huge index", bin("\x80\x04j\xff\xff\xff\xff."), "memo index 4294967295", "byte 2");
    row("MEMOIZE empty stack", bin("\x80\x04\x94."), "stack underflow", "byte 2");
    row("unknown opcode", bin("\x80\x04\xff."), "unknown pickle opcode 0xff", "byte 2");
    row("EMPTY_SET", bin("\x80\x04\x8f."), "set", "byte 2");
    row("LONG4 negative length", bin("\x80\x04\x8b\xff\xff\xff\xff."), "negative byte count", "byte 2");
    row("truncated BININT", bin("\x80\x04J\x01\x02"), "BININT needs 4 more bytes, only 2 left", "byte 2");
    row("truncated PROTO", bin("\x80"), "PROTO needs 1 more bytes", "byte 0");
}

void TestPickleReader::structuralErrors() {
    QFETCH(QByteArray, pickle);
    QFETCH(QString, needle);
    QFETCH(QString, where);
    EXPECT_PICKLE_ERROR(pickle.toStdString(), needle.toStdString(), where);
}

void TestPickleReader::hugeDeclaredLengthsDoNotAllocate() {
    // Each declares far more than is there; the reader must say so instead of allocating
    // (a std::bad_alloc or an ASan allocation-size error would fail this test).
    EXPECT_PICKLE_ERROR(bin("\x80\x04X\xff\xff\xff\x7f" "abc"), "BINUNICODE needs 2147483647 more bytes, only 3 left",
                        "byte 2");
    EXPECT_PICKLE_ERROR(bin("\x80\x04\x8d\xff\xff\xff\xff\xff\xff\xff\xff" "abc"),
                        "BINUNICODE8 needs 18446744073709551615 more bytes", "byte 2");
    EXPECT_PICKLE_ERROR(bin("\x80\x04\x8e\x00\x00\x00\x00\x00\x00\x00\x40x"), "BINBYTES8 needs", "byte 2");
    EXPECT_PICKLE_ERROR(bin("\x80\x04\x8b\xff\xff\xff\x7f\x01"), "LONG4 needs 2147483647 more bytes", "byte 2");
    EXPECT_PICKLE_ERROR(bin("\x80\x04\x95\x00\x00\x00\x00\x00\x01\x00\x00}."), "FRAME declares 1099511627776 bytes but only 2 follow (the file is cut short or corrupted)", "byte 2");
}

void TestPickleReader::invalidUtf8() {
    EXPECT_PICKLE_ERROR(bin("\x80\x04\x8c\x02\xc3\x28."), "invalid UTF-8 in SHORT_BINUNICODE string at byte 4", "byte 2");
    EXPECT_PICKLE_ERROR(bin("\x80\x04\x8c\x03\xed\xa0\x80."), "invalid UTF-8", "byte 2");   // surrogate
    EXPECT_PICKLE_ERROR(bin("\x80\x04\x8c\x02\xc0\x80."), "invalid UTF-8", "byte 2");       // overlong NUL
    EXPECT_PICKLE_ERROR(bin("\x80\x04\x8c\x04\xf4\x90\x80\x80."), "invalid UTF-8", "byte 2");  // > U+10FFFF
    // Bytes are not text: the same bytes load as bytes.
    QCOMPARE(PickleReader::read(bin("\x80\x04\x43\x02\xc3\x28.")).kind(0), PyKind::Bytes);
}

void TestPickleReader::truncationAtEveryOpcodeBoundary() {
    // Offsets of every opcode of a real PyTorch pickle, computed by Python's pickletools
    // (tests/data/scripts/make_hostile.py). Cut there, each prefix must end in one FormatError,
    // never a crash or a partial result.
    const std::string real = formats_test::bytes("traces/frag101__expandable.pickle");
    std::istringstream offsetsText(formats_test::bytes("hostile/frag101__expandable.opcodes"));
    std::vector<size_t> offsets;
    for (size_t offset = 0; offsetsText >> offset;) offsets.push_back(offset);
    // The real file has thousands of opcodes; a broken offsets file must not pass silently.
    QVERIFY(offsets.size() > 10000);
    QCOMPARE(static_cast<unsigned char>(real[2]), static_cast<unsigned char>(0x95));  // one FRAME
    QCOMPARE(offsets[2], size_t(11));

    // As written, the FRAME opcode announces the full length, so every cut fails there.
    for (size_t offset : offsets) {
        bool thrown = false;
        try {
            PickleReader::read(std::string_view(real).substr(0, offset));
        } catch (const FormatError& e) {
            thrown = true;
            QVERIFY2(e.location().rfind("byte ", 0) == 0, e.what());
        }
        QVERIFY2(thrown, qPrintable(QString("prefix of %1 bytes loaded").arg(offset)));
    }

    // Without the FRAME (valid protocol 4 too) every cut reaches the opcodes: all opcodes before
    // the cut run, and the reader must stop exactly at the cut, asking for the missing STOP.
    // Each cut re-parses its prefix, so all 13,000 cuts cost ~30 s in a Debug build and far more
    // under ASan: by default this takes every cut in the first 2,000 and last 100 opcodes and
    // every 50th in between; ALLOCSCOPE_EXHAUSTIVE=1 takes them all.
    const bool exhaustive = qEnvironmentVariableIntValue("ALLOCSCOPE_EXHAUSTIVE") != 0;
    const std::string unframed = real.substr(0, 2) + real.substr(11);
    const PyTree full = PickleReader::read(unframed);
    QCOMPARE(full.kind(full.root), PyKind::Dict);
    size_t tried = 0;
    for (size_t i = 3; i < offsets.size(); ++i) {
        if (!exhaustive && i > 2000 && i + 100 < offsets.size() && i % 50 != 0) continue;
        ++tried;
        const size_t cut = offsets[i] - 9;
        bool thrown = false;
        try {
            PickleReader::read(std::string_view(unframed).substr(0, cut));
        } catch (const FormatError& e) {
            thrown = true;
            QVERIFY2(std::string(e.what()).find("no STOP") != std::string::npos, e.what());
            QCOMPARE(e.location(), "byte " + std::to_string(cut));
        }
        QVERIFY2(thrown, qPrintable(QString("prefix of %1 bytes loaded").arg(cut)));
    }
    QVERIFY(tried > 2300);
}

void TestPickleReader::truncationAtEveryByteOfTheHeadAndTail() {
    // Mid-operand cuts (inside FRAME, LONG1, strings): every byte of the first 2 KiB and the last
    // 64 bytes of the real file, with and without its FRAME.
    const std::string framed = formats_test::bytes("traces/frag101__expandable.pickle");
    for (const std::string& real : {framed, framed.substr(0, 2) + framed.substr(11)})
    for (size_t n = 0; n < real.size(); n = (n == 2048 ? real.size() - 64 : n + 1)) {
        bool thrown = false;
        try {
            PickleReader::read(std::string_view(real).substr(0, n));
        } catch (const FormatError& e) {
            thrown = true;
            QVERIFY2(e.location().rfind("byte ", 0) == 0, e.what());
            QVERIFY2(std::stoull(e.location().substr(5)) <= n, e.what());
        }
        QVERIFY2(thrown, qPrintable(QString("prefix of %1 bytes loaded").arg(n)));
    }
}

void TestPickleReader::trailingBytesAfterStopAreIgnored() {
    // As in Python: STOP ends the pickle (files may hold several pickles back to back).
    const PyTree t = PickleReader::read(bin("\x80\x04K\x05.garbage\xff"));
    QCOMPARE(t.node(t.root).bits, uint64_t(5));
}

namespace {

// A list of ~9 MB (several of the file reader's 2 MiB blocks): strings of every length up to 300
// bytes, ints, references back to earlier strings, and one 3 MiB string (longer than a block),
// so operands are cut by block ends everywhere and one needs more than a block at once.
std::string manyBlocksPickle() {
    std::string p = bin("\x80\x04]\x94");
    uint32_t memo = 1;
    uint32_t seed = 12345;
    auto next = [&seed] { return seed = seed * 1103515245u + 12345u; };
    auto le32 = [&p](uint32_t v) {
        for (int i = 0; i < 4; ++i) p.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    };
    for (int batch = 0; batch < 120; ++batch) {
        p += '(';
        for (int i = 0; i < 1000; ++i) {
            const uint32_t r = next();
            if (r % 5 == 0 && memo > 1) {
                p += 'j';  // LONG_BINGET of an earlier string
                le32(1 + (r >> 8) % (memo - 1));
            } else if (r % 3 == 0) {
                p += 'J';  // BININT
                le32(r);
            } else {
                const size_t length = (r >> 4) % 301;
                p += '\x8c';  // SHORT_BINUNICODE...
                if (length > 255) p.back() = 'X';  // ...or BINUNICODE
                if (length > 255) le32(static_cast<uint32_t>(length));
                else p.push_back(static_cast<char>(length));
                for (size_t k = 0; k < length; ++k) p.push_back(static_cast<char>('a' + (k + r) % 26));
                p += '\x94';  // MEMOIZE
                ++memo;
            }
        }
        if (batch == 60) {
            p += 'X';
            le32(3u << 20);
            p.append(size_t{3} << 20, 'z');
        }
        p += 'e';
    }
    p += '.';
    return p;
}

std::string writeTemp(const QTemporaryDir& dir, const std::string& bytes) {
    const std::string path = dir.filePath("blocks.pickle").toStdString();
    std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return path;
}

std::string errorOf(const std::function<void()>& read) {
    try {
        read();
    } catch (const FormatError& e) {
        return std::string(e.what()) + " @ " + e.location();
    }
    return "no error";
}

}  // namespace

void TestPickleReader::aFileReadInBlocksGivesWhatMemoryGives() {
    const std::string bytes = manyBlocksPickle();
    QVERIFY(bytes.size() > (size_t{8} << 20));
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const PyTree fromFile = PickleReader::readFile(writeTemp(dir, bytes));
    const PyTree inMemory = PickleReader::read(bytes);
    const PyItems a = fromFile.items(fromFile.root);
    const PyItems b = inMemory.items(inMemory.root);
    QCOMPARE(a.size(), size_t(120 * 1000 + 1));
    QCOMPARE(a.size(), b.size());
    size_t longest = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        QCOMPARE(fromFile.kind(a[i]), inMemory.kind(b[i]));
        if (fromFile.kind(a[i]) == PyKind::Str) {
            QCOMPARE(fromFile.text(a[i]), inMemory.text(b[i]));
            longest = std::max(longest, fromFile.text(a[i]).size());
        } else {
            QCOMPARE(fromFile.node(a[i]).bits, inMemory.node(b[i]).bits);
        }
    }
    QCOMPARE(longest, size_t{3} << 20);
}

void TestPickleReader::aFileCutAnywhereFailsAsInMemory() {
    // The same error at the same byte, wherever the file ends: inside the long string, at and
    // around the ends of the reader's blocks, and at a few places in between.
    const std::string whole = manyBlocksPickle();
    const size_t longAt = whole.find(std::string(64, 'z'));
    QVERIFY(longAt != std::string::npos);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    std::vector<size_t> cuts = {longAt - 3, longAt + 100, longAt + (size_t{2} << 20), whole.size() - 1, whole.size() / 3};
    for (size_t block = size_t{1} << 20; block < whole.size(); block += size_t{1} << 20) {
        cuts.push_back(block - 1);
        cuts.push_back(block);
        cuts.push_back(block + 1);
    }
    for (const size_t cut : cuts) {
        const std::string part = whole.substr(0, cut);
        const std::string path = writeTemp(dir, part);
        const std::string fromFile = errorOf([&] { PickleReader::readFile(path); });
        const std::string inMemory = errorOf([&] { PickleReader::read(part); });
        QVERIFY2(fromFile.find("truncated") != std::string::npos, fromFile.c_str());
        QCOMPARE(fromFile, inMemory);
    }
}

void TestPickleReader::opcodeNames() {
    QCOMPARE(std::string(PickleReader::opcodeName('c')), std::string("GLOBAL"));
    QCOMPARE(std::string(PickleReader::opcodeName(0x95)), std::string("FRAME"));
    QCOMPARE(std::string(PickleReader::opcodeName(0xff)), std::string());
}

QTEST_GUILESS_MAIN(TestPickleReader)
#include "TestPickleReader.moc"
