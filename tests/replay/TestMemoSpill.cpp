// The pickle memo's frozen chunks in a temporary file (issue #18, "memory is independent of file
// size"): with the streaming import's store (storage::SpilledColdBytes) the memo's own memory stays
// bounded however many slots it holds, every slot still reads back its value (also after a write
// thawed an old chunk and a later chunk froze it again), and nothing is left in $TMPDIR. With the
// default store the same slots stay in memory, which is what makes the bound mean something.
#include <QtTest>

#include <algorithm>
#include <cstdint>

#include "storage/formats/PickleMemo.h"
#include "storage/import/SpilledColdBytes.h"
#include "tests/SpillSetting.h"

using namespace allocscope;
using formats::PickleMemo;
using formats::PyRef;

namespace {

constexpr uint64_t kChunk = PickleMemo::kChunkSlots;
constexpr uint64_t kChunks = 64;  // 4.2 million slots

// Mostly a few values (1-byte codes), every fifth chunk many (2-byte codes).
PyRef value(uint64_t i) {
    if ((i / kChunk) % 5 == 4) return static_cast<PyRef>((i * 7919) % 3000);
    return i % 3 == 0 ? 0xFFFFFFFFu : static_cast<PyRef>(i % 11 + (i / kChunk) * 100);
}

// What the memo may hold in memory whatever its length: its newest chunks, thawed (256 KiB
// each), and small change (chunk records, vector slack).
constexpr std::size_t kBound = (PickleMemo::kFreezeBehind + 1) * kChunk * sizeof(PyRef) + 64 * 1024;

bool allRead(const PickleMemo& memo, uint64_t count, const char*& failure) {
    for (uint64_t i = 0; i < count; ++i) {
        PyRef out = 0;
        if (!memo.get(i, out) || out != value(i)) {
            failure = "a slot did not read back its value";
            return false;
        }
    }
    return true;
}

// A memo whose frozen chunks go to the import's store, forced into its temporary file (spill from
// 4 KiB) in a $TMPDIR of its own.
struct SpilledMemo {
    SpilledMemo() { memo.useColdBytes(store); }
    QTemporaryDir tmp;
    testfiles::SpillSetting spill{4096, tmp.path()};
    storage::SpilledColdBytes store;
    PickleMemo memo;
};

}  // namespace

class TestMemoSpill : public QObject {
    Q_OBJECT

private slots:
    void frozenChunksLeaveMemory() {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const testfiles::SpillSetting spill(4096, tmp.path());
        {
            storage::SpilledColdBytes store;
            PickleMemo memo;
            memo.useColdBytes(store);  // not SpilledMemo: the file must be gone after the block
            std::size_t most = 0;
            for (uint64_t i = 0; i < kChunks * kChunk; ++i) {
                memo.append(value(i));
                if (i % kChunk == kChunk - 1) most = std::max(most, memo.heapBytes());
            }
            QVERIFY(store.spilled());
            // The frozen codes are all there, in the store, and not in memory.
            QVERIFY(memo.denseBytes() > kChunks * kChunk);
            QVERIFY(store.size() >= (kChunks - PickleMemo::kFreezeBehind) * kChunk);
            QVERIFY2(most <= kBound, qPrintable(QStringLiteral("memo heap %1 B").arg(most)));
            const char* failure = nullptr;
            QVERIFY2(allRead(memo, kChunks * kChunk, failure), failure);
            // Nothing named in $TMPDIR, even while the file is in use.
            QCOMPARE(testfiles::SpillSetting::filesIn(tmp.path()), QStringList());
        }
        QCOMPARE(testfiles::SpillSetting::filesIn(tmp.path()), QStringList());
    }

    void theDefaultStoreKeepsThemInMemory() {
        PickleMemo memo;
        for (uint64_t i = 0; i < 8 * kChunk; ++i) memo.append(value(i));
        // What frozenChunksLeaveMemory bounds would grow here: the default is memory.
        QVERIFY(memo.heapBytes() >= memo.denseBytes());
        const char* failure = nullptr;
        QVERIFY2(allRead(memo, 8 * kChunk, failure), failure);
    }

    void writesThawAndTheNextChunkRefreezes() {
        SpilledMemo spilled;
        QVERIFY(spilled.tmp.isValid());
        PickleMemo& memo = spilled.memo;
        for (uint64_t i = 0; i < 20 * kChunk; ++i) memo.append(value(i));
        QVERIFY(spilled.store.spilled());
        const std::size_t frozen = memo.heapBytes();
        // A put into chunk 0 (holding a frame dict every entry fetches, in a real file) and one
        // through slot() into chunk 9 (a 2-byte chunk) thaw both into memory.
        memo.put(5, 12345);
        *memo.slot(9 * kChunk + 7) = 777;
        QVERIFY(memo.heapBytes() >= frozen + 2 * kChunk * sizeof(PyRef));
        PyRef out = 0;
        QVERIFY(memo.get(5, out));
        QCOMPARE(out, PyRef{12345});
        QVERIFY(memo.get(9 * kChunk + 7, out));
        QCOMPARE(out, PyRef{777});
        // The next chunk started freezes them again, their new values with them.
        for (uint64_t i = 20 * kChunk; i < 21 * kChunk + 1; ++i) memo.append(value(i));
        QVERIFY2(memo.heapBytes() <= kBound, qPrintable(QStringLiteral("memo heap %1 B").arg(memo.heapBytes())));
        for (uint64_t i = 0; i < 21 * kChunk + 1; ++i) {
            PyRef expected = value(i);
            if (i == 5) expected = 12345;
            if (i == 9 * kChunk + 7) expected = 777;
            if (!memo.get(i, out) || out != expected) QFAIL(qPrintable(QStringLiteral("slot %1").arg(i)));
        }
    }

    void cutBackAcrossAChunkStillReadsBack() {
        // EntryBatchDecoder::undo cuts the memo back over a chunk boundary it crossed.
        SpilledMemo spilled;
        QVERIFY(spilled.tmp.isValid());
        PickleMemo& memo = spilled.memo;
        for (uint64_t i = 0; i < 6 * kChunk + 10; ++i) memo.append(value(i));
        memo.cutBack(6 * kChunk - 10);
        for (uint64_t i = 6 * kChunk - 10; i < 8 * kChunk; ++i) memo.append(value(i));
        const char* failure = nullptr;
        QVERIFY2(allRead(memo, 8 * kChunk, failure), failure);
    }
};

QTEST_GUILESS_MAIN(TestMemoSpill)
#include "TestMemoSpill.moc"
