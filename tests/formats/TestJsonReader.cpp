// The strict JSON reader: values, escapes, numbers at the 64-bit edges, located errors, depth.
#include <QtTest>

#include <limits>

#include "storage/formats/FormatError.h"
#include "storage/formats/JsonReader.h"

using namespace allocscope::formats;

#define EXPECT_JSON_ERROR(input, needle, where)                                                     \
    do {                                                                                            \
        bool thrown_ = false;                                                                       \
        try {                                                                                       \
            JsonReader::read(input);                                                                \
        } catch (const FormatError& e) {                                                            \
            thrown_ = true;                                                                         \
            QVERIFY2(std::string(e.what()).find(needle) != std::string::npos, e.what());            \
            QCOMPARE(QString::fromStdString(e.location()), QString(where));                         \
        }                                                                                           \
        QVERIFY2(thrown_, "expected a FormatError");                                                \
    } while (0)

class TestJsonReader : public QObject {
    Q_OBJECT

private slots:
    void values();
    void nestedContainersKeepTheirItems();
    void strings();
    void numbers();
    void duplicateKeysLastWins();
    void errorsAreLocated_data();
    void errorsAreLocated();
    void depthLimit();
};

void TestJsonReader::values() {
    const PyTree t = JsonReader::read("\xEF\xBB\xBF { \"a\" : [1, -2, 2.5, true, false, null, {}, []] }\n");
    QCOMPARE(t.kind(t.root), PyKind::Dict);
    PyRef a = 0;
    QVERIFY(t.find(t.root, "a", a));
    const PyItems v = t.items(a);
    QCOMPARE(v.size(), size_t(8));
    QCOMPARE(t.node(v[0]).bits, uint64_t(1));
    QVERIFY(t.node(v[1]).negative);
    QCOMPARE(static_cast<int64_t>(t.node(v[1]).bits), int64_t(-2));
    QCOMPARE(t.floatValue(v[2]), 2.5);
    QCOMPARE(t.kind(v[3]), PyKind::Bool);
    QCOMPARE(t.node(v[3]).bits, uint64_t(1));
    QCOMPARE(t.node(v[4]).bits, uint64_t(0));
    QCOMPARE(t.kind(v[5]), PyKind::None);
    QCOMPARE(t.kind(v[6]), PyKind::Dict);
    QCOMPARE(t.kind(v[7]), PyKind::List);
}

void TestJsonReader::nestedContainersKeepTheirItems() {
    // Items of an outer container arrive around its inner ones; each must keep exactly its own.
    const PyTree t = JsonReader::read(R"([1, [2, {"a": 3}, []], 4, {"b": [5, 6]}])");
    const PyItems v = t.items(t.root);
    QCOMPARE(v.size(), size_t(4));
    QCOMPARE(t.node(v[0]).bits, uint64_t(1));
    QCOMPARE(t.node(v[2]).bits, uint64_t(4));
    const PyItems inner = t.items(v[1]);
    QCOMPARE(inner.size(), size_t(3));
    QCOMPARE(t.node(inner[0]).bits, uint64_t(2));
    PyRef a = 0;
    QVERIFY(t.find(inner[1], "a", a));
    QCOMPARE(t.node(a).bits, uint64_t(3));
    QVERIFY(t.items(inner[2]).empty());
    PyRef b = 0;
    QVERIFY(t.find(v[3], "b", b));
    QCOMPARE(t.items(b).size(), size_t(2));
    QCOMPARE(t.node(t.items(b)[1]).bits, uint64_t(6));
    QCOMPARE(t.items(v[3]).size(), size_t(2));
}

void TestJsonReader::strings() {
    const PyTree t = JsonReader::read(R"(["a\"b\\c\/\b\f\n\r\t", "\u00e9\u20ac", "\ud83d\ude00", "h\u00e9llo w\u00f6rld"])");
    const PyItems v = t.items(t.root);
    QCOMPARE(t.text(v[0]), std::string("a\"b\\c/\b\f\n\r\t"));
    QCOMPARE(t.text(v[1]), std::string("\xc3\xa9\xe2\x82\xac"));
    QCOMPARE(t.text(v[2]), std::string("\xf0\x9f\x98\x80"));  // surrogate pair -> U+1F600
    QCOMPARE(t.text(v[3]), std::string("h\xc3\xa9llo w\xc3\xb6rld"));
}

void TestJsonReader::numbers() {
    const PyTree t = JsonReader::read("[18446744073709551615, -9223372036854775808, 0, -0, 1e3, 1.5E-2, 123456789012]");
    const PyItems v = t.items(t.root);
    QCOMPARE(t.node(v[0]).bits, std::numeric_limits<uint64_t>::max());
    QVERIFY(!t.node(v[0]).negative);
    QCOMPARE(static_cast<int64_t>(t.node(v[1]).bits), std::numeric_limits<int64_t>::min());
    QVERIFY(t.node(v[1]).negative);
    QCOMPARE(t.node(v[2]).bits, uint64_t(0));
    QVERIFY(!t.node(v[3]).negative);
    QCOMPARE(t.kind(v[4]), PyKind::Float);
    QCOMPARE(t.floatValue(v[4]), 1000.0);
    QCOMPARE(t.floatValue(v[5]), 0.015);
    QCOMPARE(t.node(v[6]).bits, uint64_t(123456789012));
}

void TestJsonReader::duplicateKeysLastWins() {
    const PyTree t = JsonReader::read(R"({"k": 1, "k": 2})");
    PyRef v = 0;
    QVERIFY(t.find(t.root, "k", v));
    QCOMPARE(t.node(v).bits, uint64_t(2));
}

void TestJsonReader::errorsAreLocated_data() {
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("needle");
    QTest::addColumn<QString>("where");
    QTest::newRow("empty") << QByteArray("") << "empty input" << "line 1, column 1";
    QTest::newRow("truncated") << QByteArray("{\"a\": [1,") << "unexpected end of input" << "line 1, column 10";
    QTest::newRow("trailing comma") << QByteArray("[1,]") << "expected a JSON value" << "line 1, column 4";
    QTest::newRow("object trailing comma") << QByteArray("{\"a\":1,}") << "expected a string key" << "line 1, column 8";
    QTest::newRow("second line") << QByteArray("{\n  \"a\": tru\n}") << "expected a JSON value" << "line 2, column 8";
    QTest::newRow("NaN") << QByteArray("[NaN]") << "expected a JSON value, found 'N'" << "line 1, column 2";
    QTest::newRow("leading zero") << QByteArray("[01]") << "leading zero" << "line 1, column 2";
    QTest::newRow("2^64") << QByteArray("[18446744073709551616]") << "does not fit in 64 bits" << "line 1, column 2";
    QTest::newRow("below -2^63") << QByteArray("[-9223372036854775809]") << "below -2^63" << "line 1, column 2";
    QTest::newRow("1e999") << QByteArray("[1e999]") << "out of range" << "line 1, column 2";
    QTest::newRow("lone low surrogate") << QByteArray("[\"\\udc00\"]") << "lone low surrogate" << "line 1, column 3";
    QTest::newRow("lone high surrogate") << QByteArray("[\"\\ud800x\"]") << "high surrogate" << "line 1, column 3";
    QTest::newRow("bad escape") << QByteArray("[\"\\q\"]") << "invalid escape" << "line 1, column 3";
    QTest::newRow("control char") << QByteArray("[\"a\nb\"]") << "control character" << "line 1, column 4";
    QTest::newRow("invalid UTF-8") << QByteArray("[\"a\xff\"]") << "invalid UTF-8" << "line 1, column 4";
    QTest::newRow("unterminated") << QByteArray("[\"abc") << "unterminated string" << "line 1, column 2";
    QTest::newRow("trailing data") << QByteArray("{} x") << "after the JSON value" << "line 1, column 4";
    QTest::newRow("missing colon") << QByteArray("{\"a\" 1}") << "expected ':'" << "line 1, column 6";
    QTest::newRow("mismatched") << QByteArray("[1}") << "expected ',' or ']'" << "line 1, column 3";
    QTest::newRow("comment") << QByteArray("// x\n{}") << "expected a JSON value" << "line 1, column 1";
}

void TestJsonReader::errorsAreLocated() {
    QFETCH(QByteArray, json);
    QFETCH(QString, needle);
    QFETCH(QString, where);
    EXPECT_JSON_ERROR(json.toStdString(), needle.toStdString(), where);
}

void TestJsonReader::depthLimit() {
    std::string ok(JsonReader::kMaxDepth, '[');
    ok.append(JsonReader::kMaxDepth, ']');
    const PyTree t = JsonReader::read(ok);
    QCOMPARE(t.kind(t.root), PyKind::List);
    // One level more, or a million, fails cleanly (no recursion, no crash).
    std::string deeper(JsonReader::kMaxDepth + 1, '[');
    deeper.append(JsonReader::kMaxDepth + 1, ']');
    EXPECT_JSON_ERROR(deeper, "nesting deeper than 10000 levels", QString("line 1, column %1").arg(JsonReader::kMaxDepth + 1));
    std::string million(1000000, '[');
    EXPECT_JSON_ERROR(million, "nesting deeper than", "line 1, column 10001");
}

QTEST_GUILESS_MAIN(TestJsonReader)
#include "TestJsonReader.moc"
