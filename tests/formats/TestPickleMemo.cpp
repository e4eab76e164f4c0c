// The pickle memo (issue #18): old chunks are frozen into a table of distinct values plus a 1- or
// 2-byte index per slot, and must still give back every value, take writes (which thaw them),
// and cut back as before; frozen chunks take less memory than thawed ones.
#include <QtTest>

#include <cstdint>
#include <vector>

#include "storage/formats/PickleMemo.h"

using namespace allocscope;
using formats::PickleMemo;
using formats::PyRef;

namespace {

constexpr uint64_t kChunk = PickleMemo::kChunkSlots;

// A memo of `chunks` full chunks whose slot i holds value(i).
template <typename Value>
PickleMemo filled(uint64_t chunks, Value value) {
    PickleMemo memo;
    for (uint64_t i = 0; i < chunks * kChunk; ++i) memo.append(value(i));
    return memo;
}

PyRef few(uint64_t i) { return i % 3 == 0 ? 0xFFFFFFFFu : static_cast<PyRef>(i % 7); }         // <= 256 values
PyRef many(uint64_t i) { return static_cast<PyRef>((i * 7919) % 1000); }                          // > 256 values

}  // namespace

class TestPickleMemo : public QObject {
    Q_OBJECT

private slots:
    void frozenChunksGiveBackEveryValue() {
        for (auto value : {&few, &many}) {
            const PickleMemo memo = filled(5, value);
            QCOMPARE(memo.count(), 5 * kChunk);
            for (uint64_t i = 0; i < 5 * kChunk; ++i) {
                PyRef out = 0;
                QVERIFY(memo.get(i, out));
                if (out != value(i)) QFAIL(qPrintable(QStringLiteral("slot %1").arg(i)));
            }
            PyRef out = 0;
            QVERIFY(!memo.get(5 * kChunk, out));
        }
    }

    void frozenChunksTakeLessMemory() {
        const std::size_t thawed = 5 * kChunk * sizeof(PyRef);
        // 3 of the 5 chunks are frozen (the newest kFreezeBehind stay as they are).
        QCOMPARE(PickleMemo::kFreezeBehind, std::size_t{2});
        const std::size_t narrow = filled(5, &few).denseBytes();
        const std::size_t wide = filled(5, &many).denseBytes();
        const std::size_t newest = 2 * kChunk * sizeof(PyRef);  // the two chunks not frozen yet
        // A frozen chunk: one byte per slot (at most 256 distinct values) or two, plus its table.
        QVERIFY2(narrow <= newest + 3 * (kChunk * 1 + 256 * sizeof(PyRef)), "1-byte codes");
        QVERIFY2(wide <= newest + 3 * (kChunk * 2 + 1000 * sizeof(PyRef)), "2-byte codes");
        QVERIFY(wide < thawed);
        QVERIFY(narrow < wide);
    }

    void writesIntoAFrozenChunkThawIt() {
        PickleMemo memo = filled(4, &few);
        const std::size_t before = memo.denseBytes();
        memo.put(5, 12345);  // chunk 0 is frozen: the put thaws it
        PyRef out = 0;
        QVERIFY(memo.get(5, out));
        QCOMPARE(out, PyRef{12345});
        QVERIFY(memo.get(6, out));
        QCOMPARE(out, few(6));
        QVERIFY(memo.denseBytes() > before);
        // slot() of a frozen chunk: a pointer a compaction may write through.
        PyRef* slot = memo.slot(kChunk + 1);
        QVERIFY(slot != nullptr);
        *slot = 777;
        QVERIFY(memo.get(kChunk + 1, out));
        QCOMPARE(out, PyRef{777});
        QVERIFY(memo.get(kChunk + 2, out));
        QCOMPARE(out, few(kChunk + 2));
    }

    void cutBackAndAppendAgain() {
        PickleMemo memo = filled(3, &many);
        const uint64_t at = 3 * kChunk - 10;
        memo.cutBack(at);
        QCOMPARE(memo.count(), at);
        for (uint64_t i = 0; i < 20; ++i) memo.append(static_cast<PyRef>(50'000 + i));
        QCOMPARE(memo.count(), at + 20);
        PyRef out = 0;
        QVERIFY(memo.get(at - 1, out));
        QCOMPARE(out, many(at - 1));
        QVERIFY(memo.get(at + 15, out));
        QCOMPARE(out, PyRef{50'015});
        // A fourth chunk was started: chunk 1 is frozen now and still right.
        QVERIFY(memo.get(kChunk + 3, out));
        QCOMPARE(out, many(kChunk + 3));
    }

    void sparseIndicesStillWork() {
        PickleMemo memo;
        memo.put(0xFFFFFFFFull, 9);
        memo.put(0, 1);
        PyRef out = 0;
        QVERIFY(memo.get(0xFFFFFFFFull, out));
        QCOMPARE(out, PyRef{9});
        QVERIFY(memo.get(0, out));
        QCOMPARE(out, PyRef{1});
        QCOMPARE(memo.count(), uint64_t{2});
    }
};

QTEST_APPLESS_MAIN(TestPickleMemo)
#include "TestPickleMemo.moc"
