// The streaming import's fast path for trace entries (formats::EntryBatchDecoder, issue #18): a
// batch of entry dicts read straight from the bytes must give exactly the traces, and the errors,
// of the generic read, whatever the entries look like. Each case writes a small snapshot pickle
// the way Python's pickler does (6 APPENDS batches of 50 entries) and changes one entry of batch 3
// in one way: entries the fast path takes and entries it must give back to the generic read.
#include <QtTest>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "storage/formats/FormatError.h"
#include "storage/formats/PickleMemo.h"
#include "storage/formats/PickleReader.h"
#include "storage/formats/SnapshotReader.h"
#include "storage/formats/TraceBatchSink.h"
#include "storage/import/TraceBuilder.h"
#include "storage/import/TraceFile.h"
#include "storage/import/SpilledColdBytes.h"
#include "storage/import/TraceImport.h"
#include "TraceComparison.h"
#include "tests/FileBytes.h"
#include "tests/SpillSetting.h"

using namespace allocscope;

namespace {

constexpr std::size_t kBatches = 6;
constexpr std::size_t kBatch = 50;
constexpr std::size_t kChanged = 3 * kBatch + 20;  // the entry a case changes, in batch 3

// Writes pickle opcodes as CPython's pickler does for a snapshot (protocol 4, MEMOIZE after every
// str, dict and list, a str seen before fetched with a GET).
class Pickle {
public:
    std::string bytes = std::string("\x80\x04", 2);

    void op(char c) { bytes += c; }
    std::uint32_t memoize() {
        bytes += '\x94';
        return memo_++;
    }
    void raw(std::uint64_t v, int width) {
        for (int i = 0; i < width; ++i) bytes += static_cast<char>((v >> (8 * i)) & 0xFF);
    }
    void get(std::uint32_t index) {
        if (index < 256) {
            op('h');
            raw(index, 1);
        } else {
            op('j');
            raw(index, 4);
        }
    }
    // BININT1, BININT2, BININT or the shortest LONG1, as Python picks them.
    void integer(std::int64_t v) {
        if (v >= 0 && v < 256) {
            op('K');
            raw(static_cast<std::uint64_t>(v), 1);
        } else if (v >= 0 && v < 65536) {
            op('M');
            raw(static_cast<std::uint64_t>(v), 2);
        } else if (v >= INT32_MIN && v <= INT32_MAX) {
            op('J');
            raw(static_cast<std::uint64_t>(v), 4);
        } else {
            int n = 8;
            while (n > 1) {
                const std::int64_t top = v >> (8 * (n - 1) - 1);  // the bits a shorter form would drop
                if (top != 0 && top != -1) break;
                --n;
            }
            long1(static_cast<std::uint64_t>(v), n);
        }
    }
    void long1(std::uint64_t bits, int n, bool extraByte = false, char extra = 0) {
        op('\x8a');
        raw(static_cast<std::uint64_t>(n + (extraByte ? 1 : 0)), 1);
        raw(bits, n);
        if (extraByte) bytes += extra;
    }
    // A str: a GET when this text was memoised before (the shared keys and action names).
    void str(const std::string& text) {
        if (auto it = strings_.find(text); it != strings_.end()) return get(it->second);
        strings_[text] = fresh(text);
    }
    // A new str object with its own memo slot (PyTorch's per-entry "N/A").
    std::uint32_t fresh(const std::string& text) {
        if (text.size() < 256) {
            op('\x8c');
            raw(text.size(), 1);
        } else {
            op('X');
            raw(text.size(), 4);
        }
        bytes += text;
        return memoize();
    }
    std::uint32_t longBinput() {
        op('r');
        raw(memo_, 4);
        return memo_++;
    }

private:
    std::uint32_t memo_ = 0;
    std::map<std::string, std::uint32_t> strings_;
};

// One key: value pair of an entry, written by a function (a case may write anything).
struct Field {
    std::string key;
    std::function<void(Pickle&)> value;
};
using Entry = std::vector<Field>;

// The snapshot: {'segments': [], 'device_traces': [[entries]]}. `change` may rewrite entry
// kChanged's fields, or write the whole entry itself (then it returns true).
struct Writer {
    Pickle p;
    std::vector<std::uint32_t> frameDicts;       // memo slots of the three shared frame dicts
    std::vector<std::uint32_t> entrySlots;       // memo slot of each entry dict
    std::vector<std::uint32_t> framesListSlots;  // memo slot of each entry's frames list
    std::function<bool(Writer&, Entry&)> change;
    std::function<void(Writer&, std::size_t)> beforeBatch;  // may write opcodes between batches
    bool freshContext = true;  // each entry's compile_context a new str (else one, from the memo)
    std::size_t batches = kBatches;

    void frameDict(int k) {
        p.op('}');
        frameDicts.push_back(p.memoize());
        p.op('(');
        p.str("filename");
        p.fresh("/src/model_" + std::to_string(k) + ".py");
        p.str("line");
        p.integer(10 + k);
        p.str("name");
        p.fresh("forward_" + std::to_string(k));
        p.op('u');
    }
    // A frames list of shared frame dicts: MARK GETs APPENDS, or one GET and APPEND.
    void frames(const std::vector<int>& which) {
        p.op(']');
        framesListSlots.push_back(p.memoize());
        if (which.empty()) return;
        if (which.size() > 1) p.op('(');
        for (const int k : which) {
            if (static_cast<std::size_t>(k) < frameDicts.size()) {
                p.get(frameDicts[static_cast<std::size_t>(k)]);
            } else {
                frameDict(k);  // first sight: written inline, as Python does
            }
        }
        p.op(which.size() > 1 ? 'e' : 'a');
    }
    Entry entry(std::size_t i) {
        static const char* actions[] = {"alloc", "free_requested", "free_completed"};
        // A segment_alloc first in batch 2 (the fast path memoises its new action name), then
        // fetched through the memo by later batches.
        const std::string action = (i % 40 == 5 && i >= 2 * kBatch) ? "segment_alloc" : actions[i % 3];
        const std::uint64_t addr = 0x7f3a00000000ull + (i % 17) * 0x200000ull;
        const std::int64_t size = i % 4 == 0 ? 512 : i % 4 == 1 ? 20000 : i % 4 == 2 ? 3000000 : 96;
        const std::vector<int> frameSet = i % 3 == 0 ? std::vector<int>{} : i % 3 == 1 ? std::vector<int>{0, 1, 2} : std::vector<int>{1};
        return Entry{
            {"action", [action](Pickle& q) { q.str(action); }},
            {"addr", [addr](Pickle& q) { q.integer(static_cast<std::int64_t>(addr)); }},
            {"size", [size](Pickle& q) { q.integer(size); }},
            {"stream", [](Pickle& q) { q.integer(0); }},
            {"time_us", [i](Pickle& q) { q.integer(1795317735783826 + static_cast<std::int64_t>(i)); }},
            {"compile_context", [this](Pickle& q) { if (freshContext) q.fresh("N/A"); else q.str("N/A"); }},
            {"user_metadata", [](Pickle& q) { q.str(""); }},
            {"frames", [this, frameSet](Pickle&) { frames(frameSet); }},
        };
    }
    void write(const Entry& e) {
        p.op('}');
        entrySlots.push_back(p.memoize());
        p.op('(');
        for (const Field& f : e) {
            p.str(f.key);
            f.value(p);
        }
        p.op('u');
    }
    std::string build() {
        p.op('}');
        p.memoize();
        p.op('(');
        p.str("segments");
        p.op(']');
        p.memoize();
        p.str("device_traces");
        p.op(']');
        p.memoize();
        p.op(']');
        p.memoize();
        for (std::size_t b = 0; b < batches; ++b) {
            if (beforeBatch) beforeBatch(*this, b);
            p.op('(');
            for (std::size_t i = b * kBatch; i < (b + 1) * kBatch; ++i) {
                Entry e = entry(i);
                if (i == kChanged && change && change(*this, e)) continue;
                write(e);
            }
            p.op('e');
        }
        p.op('a');  // the device list into device_traces
        p.op('u');  // the top-level dict's items
        p.op('.');
        return p.bytes;
    }
};

// Counts the entries a streaming read gives the sink the fast way and the generic way.
class PathSink final : public formats::TraceBatchSink {
public:
    void onEntries(const formats::PyTree&, std::size_t, std::size_t first, formats::PyItems entries) override {
        QCOMPARE(first, generic + fast);
        generic += entries.size();
    }
    bool onDecodedEntries(const formats::PyTree&, std::size_t, std::size_t first, const formats::DecodedEntries& entries) override {
        [&] { QCOMPARE(first, generic + fast); }();
        fast += entries.size();
        return true;
    }
    void forget(formats::PyRef, std::size_t) override {}
    std::size_t generic = 0;
    std::size_t fast = 0;
};

// The streaming import's TraceBuilder, with a memo store the test can look at (TraceBuilder's own
// goes at finish()), or one that fails as a full disk does (SpillFile::grow's std::runtime_error).
class MemoSink final : public formats::SnapshotEntrySink {
public:
    class FullDisk final : public formats::ColdBytes {
    public:
        std::uint64_t append(const std::uint8_t*, std::size_t) override { throw std::runtime_error("no room on the disk"); }
        const std::uint8_t* data() const override { return nullptr; }
        std::uint64_t size() const override { return 0; }
        std::size_t heapBytes() const override { return 0; }
    };
    explicit MemoSink(bool fullDisk = false) : fullDisk_(fullDisk) {}
    void onEntry(std::size_t device, std::size_t index, const formats::TraceEntry& entry) override {
        builder.onEntry(device, index, entry);
    }
    formats::ColdBytes* coldBytes() override {
        if (fullDisk_) return &full_;
        return &store;
    }
    storage::TraceBuilder builder;
    storage::SpilledColdBytes store;

private:
    bool fullDisk_;
    FullDisk full_;
};

}  // namespace

class TestFastEntryPath : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

    std::string write(const char* name, const std::function<bool(Writer&, Entry&)>& change) {
        Writer w;
        w.change = change;
        return testfiles::writeIn(dir_, name, w.build());
    }

private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    // The file as Python writes it: every batch after the first (new keys and frame dicts) is
    // read the fast way, and the traces are the whole read's.
    void pythonsShapeIsReadFast() {
        const std::string path = write("plain.pickle", nullptr);
        PathSink sink;
        formats::PickleReader::readFile(path, &sink);
        QCOMPARE(sink.generic, kBatch);
        QCOMPARE(sink.fast, (kBatches - 1) * kBatch);
        const std::vector<alloc::RecordedTrace> traces = testing::streamedTraces(path);
        QCOMPARE(traces.at(0).entries.size(), kBatches * kBatch);
        const std::string diff = testing::traceDifference(traces, testing::wholeTraces(path));
        QVERIFY2(diff.empty(), diff.c_str());
    }

    // A file long enough for the memo to freeze chunks (three slots an entry; a chunk of 65,536
    // is frozen once two newer ones exist), with its store forced into the temporary file: the
    // shared frame dicts every entry fetches live in chunk 0, read back from the file, and the
    // traces are the whole read's. Nothing is left in $TMPDIR.
    void aSpilledMemoGivesTheSameTraces() {
        Writer w;
        w.batches = 2000;  // 100,000 entries
        const std::string path = testfiles::writeIn(dir_, "long.pickle", w.build());
        QVERIFY(w.entrySlots.back() > 4 * formats::PickleMemo::kChunkSlots);
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const testfiles::SpillSetting spill(4096, tmp.path());
        std::vector<alloc::RecordedTrace> streamed;
        {
            MemoSink sink;
            const formats::Snapshot rest = formats::SnapshotReader::readStreaming(path, sink);
            QVERIFY(sink.store.spilled());
            QVERIFY(sink.store.size() >= 2 * formats::PickleMemo::kChunkSlots);
            QCOMPARE(sink.store.heapBytes(), std::size_t{0});
            streamed = sink.builder.finish(rest);
            QCOMPARE(testfiles::SpillSetting::filesIn(tmp.path()), QStringList());
        }
        QCOMPARE(streamed.at(0).entries.size(), w.batches * kBatch);
        const std::string diff = testing::traceDifference(streamed, testing::wholeTraces(path));
        QVERIFY2(diff.empty(), diff.c_str());
        // The import's own store (TraceBuilder's) reads the same.
        const std::string own = testing::traceDifference(testing::streamedTraces(path), streamed);
        QVERIFY2(own.empty(), own.c_str());
        QCOMPARE(testfiles::SpillSetting::filesIn(tmp.path()), QStringList());
    }

    // A store that cannot take a frozen chunk (a full disk) ends the read with its own error, not
    // a crash nor a fall-back: TraceFile::read reports it as the import's error, at the file.
    void aFullDiskEndsTheRead() {
        Writer w;
        w.batches = 2000;
        const std::string path = testfiles::writeIn(dir_, "long.pickle", w.build());
        MemoSink sink(true);
        std::string error = "<none>";
        try {
            formats::SnapshotReader::readStreaming(path, sink);
        } catch (const formats::FormatError& e) {
            error = std::string("a FormatError: ") + e.what();
        } catch (const std::runtime_error& e) {
            error = e.what();
        }
        QCOMPARE(error, std::string("no room on the disk"));
    }

    // Entries that differ from the usual shape give the whole read's traces, read fast where the
    // fast path knows the shape (`fast`: the changed batch was decoded fast) and generically where not.
    void deviatingEntriesGiveTheSameTraces_data() {
        QTest::addColumn<int>("which");
        QTest::addColumn<bool>("fast");
        const char* names[] = {"extra keys",     "missing keys",       "other key order", "frames list from the memo",
                               "wide ints",      "huge ints",          "duplicate key",   "pool_id",
                               "FRAME opcodes",  "new frame dict",     "BINPUT puts",     "non-ASCII strings",
                               "long BINUNICODE", "one-item dict",     "None value",      "int key",
                               "entry twice",     "entry as a value", "two keys swapped"};
        const bool fast[] = {true, true, true, true, true, false, true, false, true, false, true, true, true, false, false, true, false, false, true};
        for (int i = 0; i < 19; ++i) QTest::newRow(names[i]) << i << fast[i];
    }
    void deviatingEntriesGiveTheSameTraces() {
        QFETCH(int, which);
        QFETCH(bool, fast);
        const auto change = [which](Writer& w, Entry& e) {
            Pickle& p = w.p;
            switch (which) {
            case 0:  // keys the reader does not know, with an int, a str and a list
                e.push_back({"extra_int", [](Pickle& q) { q.integer(7); }});
                e.insert(e.begin(), {"extra_str", [](Pickle& q) { q.fresh("note"); }});
                e.push_back({"extra_list", [](Pickle& q) {
                                 q.op(']');
                                 q.memoize();
                             }});
                break;
            case 1:  // only the action and the address
                e.resize(2);
                break;
            case 2:
                std::reverse(e.begin(), e.end());
                break;
            case 3:  // the previous entry's frames list itself, through the memo
                e.back().value = [&w](Pickle& q) { q.get(w.framesListSlots.back()); };
                break;
            case 4:  // LONG1 of up to 8 bytes: a negative stream, an int64-wide time
                e[3].value = [](Pickle& q) { q.long1(static_cast<std::uint64_t>(-2), 1); };
                e[4].value = [](Pickle& q) { q.long1(0x7fffffffffffffffull, 8); };
                break;
            case 5:  // 9-byte LONG1: a time of 2**64-1 (read as unknown) and a stream of 2**63
                e[4].value = [](Pickle& q) { q.long1(0xffffffffffffffffull, 8, true, 0); };
                e[3].value = [](Pickle& q) { q.long1(0x8000000000000000ull, 8, true, 0); };
                break;
            case 6:  // size twice: the last one wins, as in a Python dict
                e.insert(e.begin() + 1, {"size", [](Pickle& q) { q.fresh("not a size"); }});
                break;
            case 7:  // newest PyTorch: a pool id tuple
                e.push_back({"pool_id", [](Pickle& q) {
                                 q.integer(1);
                                 q.integer(3);
                                 q.op('\x86');  // TUPLE2
                                 q.memoize();
                             }});
                break;
            case 8:  // FRAME hints between values (declaring what is there)
                for (Field& f : e) {
                    f.value = [inner = f.value](Pickle& q) {
                        q.op('\x95');
                        q.raw(4, 8);
                        inner(q);
                    };
                }
                break;
            case 9:  // a stack seen for the first time: its frame dict is written inline
                e.back().value = [&w](Pickle&) { w.frames({0, 3}); };
                break;
            case 10:  // LONG_BINPUT instead of MEMOIZE (another pickler's habit), for the dict and a str
                p.op('}');
                w.entrySlots.push_back(p.longBinput());
                p.op('(');
                e[5].value = [](Pickle& q) {
                    q.op('\x8c');
                    q.raw(3, 1);
                    q.bytes += "N/A";
                    q.longBinput();
                };
                for (const Field& f : e) {
                    p.str(f.key);
                    f.value(p);
                }
                p.op('u');
                return true;
            case 11:
                e[6].value = [](Pickle& q) { q.fresh("rang \xc3\xa9 \xe2\x9c\x93"); };
                break;
            case 12:
                e[5].value = [](Pickle& q) { q.fresh(std::string(300, 'c')); };
                break;
            case 13:  // {'action': 'snapshot'}: one item, SETITEM
                p.op('}');
                w.entrySlots.push_back(p.memoize());
                p.str("action");
                p.str("snapshot");
                p.op('s');
                return true;
            case 14:
                e.push_back({"extra_none", [](Pickle& q) { q.op('N'); }});
                break;
            case 15: {  // an int key: a Python dict may have one; the reader ignores it
                p.op('}');
                w.entrySlots.push_back(p.memoize());
                p.op('(');
                p.integer(5);
                p.integer(6);
                for (const Field& f : e) {
                    p.str(f.key);
                    f.value(p);
                }
                p.op('u');
                return true;
            }
            case 16:  // the previous entry again, through the memo (the same dict twice in the list)
                p.get(w.entrySlots.back());
                return true;
            case 17:  // a value that is the previous entry's dict
                e.push_back({"previous", [&w](Pickle& q) { q.get(w.entrySlots[w.entrySlots.size() - 2]); }});
                break;
            case 18:  // size and stream in each other's place: as many keys as the entries around it
                std::swap(e[2], e[3]);
                break;
            default: break;
            }
            return false;
        };
        const std::string path = write("changed.pickle", change);
        PathSink sink;
        formats::PickleReader::readFile(path, &sink);
        QCOMPARE(sink.generic + sink.fast, kBatches * kBatch);
        QCOMPARE(sink.fast, (kBatches - (fast ? 1 : 2)) * kBatch);
        const std::vector<alloc::RecordedTrace> traces = testing::streamedTraces(path);
        QCOMPARE(traces.at(0).entries.size(), kBatches * kBatch);
        const std::string diff = testing::traceDifference(traces, testing::wholeTraces(path));
        QVERIFY2(diff.empty(), diff.c_str());
    }

    // The fast path reads a frames list whose bytes equal a kept list's as that list again, without
    // its GETs (EntryBatchDecoder::readsAs, knownBytes_). A put between two batches over the memo slot
    // of a shared frame dict (no Python pickler does it; a hand-made file may) changes what the
    // same bytes mean: the entries after it carry the other frame, as in the whole read. The put
    // makes no new value, so no compaction or tree growth tells the fast path of it.
    void aFrameDictPutOverBetweenBatchesIsSeen() {
        Writer w;
        w.freshContext = false;  // batches that make no new value: no compaction between them
        w.batches = 8;
        w.beforeBatch = [](Writer& self, std::size_t b) {
            if (b != 5) return;
            self.p.get(self.frameDicts[2]);  // shared dict 2, put over shared dict 1's slot
            self.p.op('r');
            self.p.raw(self.frameDicts[1], 4);
            self.p.op('0');  // POP
        };
        const std::string path = testfiles::writeIn(dir_, "put-over.pickle", w.build());
        const std::vector<alloc::RecordedTrace> traces = testing::streamedTraces(path);
        QCOMPARE(traces.at(0).entries.size(), w.batches * kBatch);
        const std::string diff = testing::traceDifference(traces, testing::wholeTraces(path));
        QVERIFY2(diff.empty(), diff.c_str());
        // The put means something: an entry of batch 5 written with frames [0, 1, 2] has [0, 2, 2].
        const alloc::RecordedTrace& trace = traces.at(0);
        const std::size_t entry = 5 * kBatch;  // 250: i % 3 == 1
        const alloc::Stack& stack = trace.stacks.stack(trace.entries[entry].stackId);
        QCOMPARE(stack.size(), std::size_t{3});
        QCOMPARE(stack[1].name, std::string("forward_2"));
    }

    // Bad entries inside a batch the fast path would take give the whole read's error.
    void badEntriesGiveTheSameError_data() {
        QTest::addColumn<int>("which");
        QTest::addColumn<QString>("expected");
        QTest::newRow("negative size") << 0 << "negative value -5 where a size or address is expected (device_traces[0][170].size, byte ";
        QTest::newRow("int action") << 1 << "expected a str, found an int (device_traces[0][170].action, byte ";
        QTest::newRow("unknown action") << 2 << "unknown trace action 'allocate' (device_traces[0][170])";
        QTest::newRow("bad UTF-8") << 3 << "invalid UTF-8 in SHORT_BINUNICODE string at byte ";
        QTest::newRow("frame not a dict") << 4 << "expected a dict, found a str (device_traces[0][170].frames[0], byte ";
        QTest::newRow("range past 2**64") << 5 << "runs past the end of the 64-bit address space (device_traces[0][170].addr, byte ";
        QTest::newRow("bad opcode") << 6 << "unknown pickle opcode 0xff (not a pickle, or corrupted) (byte ";
        QTest::newRow("FRAME past the end") << 7 << "FRAME declares 1000000 bytes but only ";
    }
    void badEntriesGiveTheSameError() {
        QFETCH(int, which);
        QFETCH(QString, expected);
        const auto change = [which](Writer& w, Entry& e) {
            switch (which) {
            case 0: e[2].value = [](Pickle& q) { q.integer(-5); }; break;
            case 1: e[0].value = [](Pickle& q) { q.integer(3); }; break;
            case 2: e[0].value = [](Pickle& q) { q.fresh("allocate"); }; break;
            case 3: e[5].value = [](Pickle& q) { q.fresh("N/\xff"); }; break;
            case 4: e.back().value = [&w](Pickle& q) {
                    q.op(']');
                    w.framesListSlots.push_back(q.memoize());
                    q.str("alloc");  // a GET of an old str, where a frame dict belongs
                    q.op('a');
                };
                break;
            case 5:
                e[1].value = [](Pickle& q) { q.long1(0xfffffffffffff000ull, 8, true, 0); };
                e[2].value = [](Pickle& q) { q.integer(8192); };
                break;
            case 6: e[3].value = [](Pickle& q) { q.op('\xff'); }; break;
            case 7: e[3].value = [](Pickle& q) {
                    q.op('\x95');
                    q.raw(1000000, 8);
                    q.integer(0);
                };
                break;
            default: break;
            }
            return false;
        };
        const std::string path = write("bad.pickle", change);
        const std::string streamedError = testing::formatErrorOf([&] { testing::streamedTraces(path); });
        const std::string wholeError = testing::formatErrorOf([&] { testing::wholeTraces(path); });
        QCOMPARE(streamedError, wholeError);
        QVERIFY2(streamedError.find(expected.toStdString()) != std::string::npos, streamedError.c_str());
    }

    // A file cut inside a batch the fast path takes: the whole read's message, at its byte.
    void aCutBatchSaysSo() {
        Writer w;
        const std::string bytes = w.build();
        for (const std::size_t cut : {bytes.size() * 55 / 100, bytes.size() * 70 / 100 + 3}) {
            const std::string path = testfiles::writeIn(dir_, "cut.pickle", bytes.substr(0, cut));
            const std::string streamedError = testing::formatErrorOf([&] { testing::streamedTraces(path); });
            QCOMPARE(streamedError, testing::formatErrorOf([&] { testing::wholeTraces(path); }));
            QVERIFY2(streamedError.find("truncated") != std::string::npos, streamedError.c_str());
        }
    }

    // The hostile corpus (tests/data/hostile/pickle) streamed: each file gets the message the
    // whole read gives it (or loads the same way), so the fast path changes no error.
    void hostilePicklesKeepTheirMessages() {
        const QDir d(QString::fromLatin1(ALLOCSCOPE_TEST_DATA) + "/hostile/pickle");
        const QStringList files = d.entryList(QDir::Files, QDir::Name);
        QVERIFY(files.size() > 50);
        for (const QString& file : files) {
            const std::string path = d.filePath(file).toStdString();
            const auto load = [&](storage::StreamMode mode) {
                return testing::formatErrorOf([&] { storage::TraceFile::load(path, mode); });
            };
            QCOMPARE(QString::fromStdString(load(storage::StreamMode::Always)), QString::fromStdString(load(storage::StreamMode::Never)));
        }
    }
};

QTEST_GUILESS_MAIN(TestFastEntryPath)
#include "TestFastEntryPath.moc"
