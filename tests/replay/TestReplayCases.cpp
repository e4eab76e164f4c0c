// Hand-made recordings, each exercising one replay rule, with the segment events PyTorch 2.11
// emits and the final statistics derived by hand from reference/pytorch-allocator-2.11.md:
// two streams with record_stream (a late free_completed, one that never comes), garbage
// collection under a memory fraction, a run that ends in an OOM, repeated explicit empty_cache()
// (before an alloc, before a free, at the end), and the list form of roundup_power2_divisions.
#include <QtTest>

#include <map>
#include <string>

#include "allocator/config/ConfigParser.h"
#include "allocator/replay/TraceReplayer.h"
#include "ReplayTestData.h"

using namespace allocscope::alloc;

namespace {

constexpr std::uint64_t MiB = 1024ull * 1024ull;

// Builds a RecordedTrace entry by entry.
struct TraceBuilder {
    RecordedTrace trace;
    TraceBuilder& add(EventAction action, std::uint64_t address, std::uint64_t size, StreamId stream = 0) {
        RecordedEntry e;
        e.action = action;
        e.address = address;
        e.size = size;
        e.streamIndex = trace.streamIndex(stream);
        trace.entries.push_back(e);
        return *this;
    }
    TraceBuilder& segAlloc(std::uint64_t a, std::uint64_t s, StreamId st = 0) { return add(EventAction::SegmentAlloc, a, s, st); }
    TraceBuilder& segFree(std::uint64_t a, std::uint64_t s, StreamId st = 0) { return add(EventAction::SegmentFree, a, s, st); }
    TraceBuilder& alloc(std::uint64_t a, std::uint64_t s, StreamId st = 0) { return add(EventAction::Alloc, a, s, st); }
    TraceBuilder& freeRequested(std::uint64_t a, std::uint64_t s, StreamId st = 0) { return add(EventAction::FreeRequested, a, s, st); }
    TraceBuilder& freeCompleted(std::uint64_t a, std::uint64_t s, StreamId st = 0) { return add(EventAction::FreeCompleted, a, s, st); }
    TraceBuilder& free(std::uint64_t a, std::uint64_t s, StreamId st = 0) { return freeRequested(a, s, st).freeCompleted(a, s, st); }
    TraceBuilder& oom(std::uint64_t roundedSize, StreamId st = 0) { return add(EventAction::Oom, 0, roundedSize, st); }
};

// Checks the listed keys (and that every other Stat key not listed is 0 unless allowed).
void expectStats(const DeviceStats& stats, const std::map<std::string, std::int64_t>& want) {
    std::map<std::string, std::int64_t> have;
    for (const auto& [key, value] : stats.flatten()) have[key] = value;
    QCOMPARE(have.size(), std::size_t{122});
    QStringList bad;
    for (const auto& [key, value] : have) {
        auto it = want.find(key);
        const std::int64_t expected = it != want.end() ? it->second : (key == "max_split_size" ? -1 : 0);
        if (value != expected) bad << QString("%1: want %2, got %3").arg(QString::fromStdString(key)).arg(expected).arg(value);
    }
    QVERIFY2(bad.isEmpty(), qPrintable(bad.join("\n")));
}

// The four numbers of a Stat for "all" and one pool ("large_pool" or "small_pool"); the other
// pool stays 0.
void statFor(std::map<std::string, std::int64_t>& m, const std::string& name, const std::string& pool,
             std::int64_t allocated, std::int64_t current, std::int64_t freed, std::int64_t peak) {
    for (const std::string& p : {std::string("all"), pool}) {
        m[name + "." + p + ".allocated"] = allocated;
        m[name + "." + p + ".current"] = current;
        m[name + "." + p + ".freed"] = freed;
        m[name + "." + p + ".peak"] = peak;
    }
}

ReplayResult replayExact(const RecordedTrace& trace, const std::string& conf, std::optional<double> fraction = {}) {
    ReplayOptions options;
    const ParseResult parsed = parseConfig(conf);
    if (!parsed.accepted()) qFatal("bad config in test: %s", conf.c_str());
    options.config = parsed.config;
    options.memoryFraction = fraction;
    return TraceReplayer::replay(trace, options);
}

}  // namespace

class TestReplayCases : public QObject {
    Q_OBJECT

private slots:
    // Stream 0 and side stream 7. A 5 MiB block is freed while another stream still uses it
    // (free_completed comes two program events later): the replay must keep it pending, so the
    // next 5 MiB request carves a new block; after the completion the block is reused. A second
    // pending free never completes and ends as active_pending_free.
    void twoStreamsRecordStream() {
        const std::uint64_t s0 = 0x10000000, s7 = 0x20000000;
        TraceBuilder b;
        b.segAlloc(s0, 20 * MiB).alloc(s0, 5 * MiB)
            .freeRequested(s0, 5 * MiB)                      // pending: used on another stream
            .alloc(s0 + 5 * MiB, 5 * MiB)                     // cannot reuse the pending block
            .freeCompleted(s0, 5 * MiB)                      // the other stream's event completed
            .alloc(s0, 5 * MiB)                              // best fit: the 5 MiB block again
            .segAlloc(s7, 20 * MiB, 7).alloc(s7, 2 * MiB, 7)  // stream 7 has its own pool
            .free(s7, 2 * MiB, 7)
            .freeRequested(s0 + 5 * MiB, 5 * MiB);           // never completes
        const ReplayResult r = replayExact(b.trace, "");
        QVERIFY2(r.exact(), qPrintable(replaytest::describeInexact(r)));
        std::map<std::string, std::int64_t> want;
        statFor(want, "allocation", "large_pool", 4, 1, 3, 3);
        statFor(want, "allocated_bytes", "large_pool", 17 * MiB, 5 * MiB, 12 * MiB, 12 * MiB);
        statFor(want, "active", "large_pool", 4, 2, 2, 3);
        statFor(want, "active_bytes", "large_pool", 17 * MiB, 10 * MiB, 7 * MiB, 12 * MiB);
        statFor(want, "requested_bytes", "large_pool", 17 * MiB, 10 * MiB, 7 * MiB, 12 * MiB);
        statFor(want, "segment", "large_pool", 2, 2, 0, 2);
        statFor(want, "reserved_bytes", "large_pool", 40 * MiB, 40 * MiB, 0, 40 * MiB);
        statFor(want, "inactive_split", "large_pool", 3, 1, 2, 2);
        statFor(want, "inactive_split_bytes", "large_pool", 38 * MiB, 10 * MiB, 28 * MiB, 28 * MiB);
        want["num_device_alloc"] = 2;
        expectStats(r.stats, want);
        // The layout: the never-completed free is still pending.
        QCOMPARE(r.segments.size(), std::size_t{2});
        QCOMPARE(r.segments[0].blocks.size(), std::size_t{3});
        QCOMPARE(r.segments[0].blocks[1].address, s0 + 5 * MiB);
        QCOMPARE(r.segments[0].blocks[1].state, BlockState::ActivePendingFree);
        QCOMPARE(r.segments[0].blocks[0].state, BlockState::ActiveAllocated);
        QCOMPARE(r.segments[1].stream, StreamId{7});
        // The program the replay derived: record_stream on a side stream before each late free.
        int recordStreams = 0, completions = 0;
        for (const Op& op : r.program.ops) {
            recordStreams += op.kind == OpKind::RecordStream;
            completions += op.kind == OpKind::CompletePending;
        }
        QCOMPARE(recordStreams, 2);
        QCOMPARE(completions, 1);
    }

    // If the replay ignored the late completion (freeing at once), the second 5 MiB request would
    // reuse the freed block and the recorded address would differ: the replay must say so.
    void lateCompletionIsNotIgnored() {
        const std::uint64_t s0 = 0x10000000;
        TraceBuilder b;
        b.segAlloc(s0, 20 * MiB).alloc(s0, 5 * MiB).freeRequested(s0, 5 * MiB).freeCompleted(s0, 5 * MiB)
            .alloc(s0 + 5 * MiB, 5 * MiB);  // wrong on purpose: the free completed, so s0 is reused
        const ReplayResult r = replayExact(b.trace, "");
        QVERIFY(r.divergence.has_value());
        QVERIFY2(QString::fromStdString(r.divergence->what).contains("alloc"), r.divergence->what.c_str());
        QCOMPARE(r.divergence->entryIndex, std::size_t{4});
    }

    // A step's segment events are compared in order with the recorded ones: the first that
    // differs is named by its place in the step, and a step with more than the recording has
    // says the recording has "nothing more".
    void segmentEventDifferencesAreNamed() {
        const std::uint64_t s0 = 0x10000000;
        {
            TraceBuilder b;
            b.segAlloc(s0, 30 * MiB).alloc(s0, 5 * MiB);  // PyTorch reserves 20 MiB for 5 MiB
            const ReplayResult r = replayExact(b.trace, "");
            QVERIFY(r.divergence.has_value());
            const QString what = QString::fromStdString(r.divergence->what);
            QVERIFY2(what.startsWith("segment event 0 of the step: recorded segment_alloc"), qPrintable(what));
            QVERIFY2(what.contains("31457280") && what.contains("replay did segment_alloc") && what.contains("20971520"),
                     qPrintable(what));
        }
        {
            TraceBuilder b;
            b.segAlloc(s0, 20 * MiB).alloc(s0, 5 * MiB).alloc(s0 + 5 * MiB, 15 * MiB)
                .alloc(s0 + 20 * MiB, 12 * MiB);  // no room left: the replay reserves a segment
            const ReplayResult r = replayExact(b.trace, "");
            QVERIFY(r.divergence.has_value());
            const QString what = QString::fromStdString(r.divergence->what);
            QVERIFY2(what.startsWith("segment event 0 of the step: recorded nothing more, replay did segment_alloc"),
                     qPrintable(what));
            QCOMPARE(r.divergence->entryIndex, std::size_t{3});
        }
    }

    // fraction 0.001 of 85,017,493,504 B: cap 85,017,493 B, GC threshold 0.5 -> 42,508,746.5 B.
    // 30 + 30 MiB cached; X1 freed; a 32 MiB request misses: reserved 60 MiB > threshold, GC
    // frees X1 (the only unsplit free block). X2 and Z freed; a 40 MiB request misses again, both
    // are as old as the average: GC frees both (the pass does not stop at its target).
    void garbageCollectionUnderFraction() {
        const std::uint64_t a = 0x10000000, c = 0x20000000, z = 0x30000000, w = 0x40000000;
        TraceBuilder b;
        b.segAlloc(a, 30 * MiB).alloc(a, 30 * MiB).segAlloc(c, 30 * MiB).alloc(c, 30 * MiB)
            .free(a, 30 * MiB)
            .segFree(a, 30 * MiB).segAlloc(z, 32 * MiB).alloc(z, 32 * MiB)
            .free(c, 30 * MiB).free(z, 32 * MiB)
            .segFree(c, 30 * MiB).segFree(z, 32 * MiB).segAlloc(w, 40 * MiB).alloc(w, 40 * MiB);
        const ReplayResult r = replayExact(b.trace, "garbage_collection_threshold:0.5", 0.001);
        QVERIFY2(r.exact(), qPrintable(replaytest::describeInexact(r)));
        QVERIFY(r.emptyCacheSteps.empty());  // the releases were the allocator's own (GC)
        std::map<std::string, std::int64_t> want;
        for (const char* n : {"allocation", "active"}) statFor(want, n, "large_pool", 4, 1, 3, 2);
        for (const char* n : {"allocated_bytes", "active_bytes", "requested_bytes", "reserved_bytes"}) {
            statFor(want, n, "large_pool", 132 * MiB, 40 * MiB, 92 * MiB, 62 * MiB);
        }
        statFor(want, "segment", "large_pool", 4, 1, 3, 2);
        want["num_device_alloc"] = 4;
        want["num_device_free"] = 3;
        expectStats(r.stats, want);
    }

    // Without the fraction the threshold is inert: the same recording then diverges (no GC).
    void garbageCollectionNeedsFraction() {
        const std::uint64_t a = 0x10000000, c = 0x20000000, z = 0x30000000;
        TraceBuilder b;
        b.segAlloc(a, 30 * MiB).alloc(a, 30 * MiB).segAlloc(c, 30 * MiB).alloc(c, 30 * MiB).free(a, 30 * MiB)
            .segFree(a, 30 * MiB).segAlloc(z, 32 * MiB).alloc(z, 32 * MiB);
        const ReplayResult r = replayExact(b.trace, "garbage_collection_threshold:0.5");
        // Tried without and with an inferred empty_cache(): with it the events match, so the
        // replay explains the release as an explicit empty_cache() (num_sync_all_streams 1).
        QVERIFY2(r.exact(), qPrintable(replaytest::describeInexact(r)));
        QCOMPARE(r.emptyCacheSteps.size(), std::size_t{1});
        QCOMPARE(r.stats.num_sync_all_streams, 1);
        QCOMPARE(r.rewinds, std::uint64_t{1});
    }

    // cap 85,017,493 B: 50 MiB fits, 50 + 40 MiB does not. The failing request runs the whole
    // chain: release_cached_blocks (sync +1, nothing free to release), the retry (+1), OOM (+1).
    void oomEnding() {
        const std::uint64_t a = 0x10000000;
        TraceBuilder b;
        b.segAlloc(a, 50 * MiB).alloc(a, 50 * MiB).oom(40 * MiB);
        const ReplayResult r = replayExact(b.trace, "", 0.001);
        QVERIFY2(r.exact(), qPrintable(replaytest::describeInexact(r)));
        std::map<std::string, std::int64_t> want;
        for (const char* n : {"allocation", "active", "segment"}) statFor(want, n, "large_pool", 1, 1, 0, 1);
        for (const char* n : {"allocated_bytes", "active_bytes", "requested_bytes", "reserved_bytes"}) {
            statFor(want, n, "large_pool", 50 * MiB, 50 * MiB, 0, 50 * MiB);
        }
        want["num_device_alloc"] = 1;
        want["num_alloc_retries"] = 1;
        want["num_ooms"] = 1;
        want["num_sync_all_streams"] = 1;
        expectStats(r.stats, want);
    }

    // The same program on a larger cap: the recorded OOM does not happen, which is a divergence.
    void oomThatVanishes() {
        TraceBuilder b;
        b.segAlloc(0x10000000, 50 * MiB).alloc(0x10000000, 50 * MiB).oom(40 * MiB);
        const ReplayResult r = replayExact(b.trace, "", 0.01);
        QVERIFY(r.divergence.has_value());
        QCOMPARE(r.divergence->entryIndex, std::size_t{2});  // the oom entry's step
        bool noted = false;
        for (const std::string& note : r.notes) noted = noted || note.find("did not happen") != std::string::npos;
        QVERIFY(noted);
        QCOMPARE(r.stats.num_ooms, 0);
    }

    // Two explicit empty_cache() calls, each before an alloc that the cached block would otherwise
    // serve. Trying the second re-runs the prefix, which must replay the first step after its
    // empty_cache() again: without it the rebuilt state has one segment fewer freed and created,
    // and its program one empty_cache() fewer.
    void emptyCacheBeforeTwoAllocs() {
        const std::uint64_t s1 = 0x10000000;
        TraceBuilder b;
        b.segAlloc(s1, 30 * MiB).alloc(s1, 30 * MiB).free(s1, 30 * MiB)
            .segFree(s1, 30 * MiB).segAlloc(s1, 30 * MiB).alloc(s1, 30 * MiB)
            .free(s1, 30 * MiB)
            .segFree(s1, 30 * MiB).segAlloc(s1, 30 * MiB).alloc(s1, 30 * MiB);
        const ReplayResult r = replayExact(b.trace, "");
        QVERIFY2(r.exact(), qPrintable(replaytest::describeInexact(r)));
        QCOMPARE(r.emptyCacheSteps.size(), std::size_t{2});
        QCOMPARE(r.rewinds, std::uint64_t{2});  // each of the two allocs was tried both ways
        int emptyCaches = 0;
        for (const Op& op : r.program.ops) emptyCaches += op.kind == OpKind::EmptyCache;
        QCOMPARE(emptyCaches, 2);
        std::map<std::string, std::int64_t> have;
        for (const auto& [key, value] : r.stats.flatten()) have[key] = value;
        QCOMPARE(have.at("segment.all.allocated"), std::int64_t{3});
        QCOMPARE(have.at("segment.all.freed"), std::int64_t{2});
        QCOMPARE(have.at("num_device_alloc"), std::int64_t{3});
        QCOMPARE(have.at("num_device_free"), std::int64_t{2});
    }

    // Three explicit empty_cache() calls: before an alloc (only the variant with an
    // empty_cache() reproduces the recording: without it the cached 30 MiB block would be
    // reused), before a free (frees never release segments) and after the last program event.
    void repeatedEmptyCache() {
        const std::uint64_t s1 = 0x10000000, small = 0x7000000;
        TraceBuilder b;
        b.segAlloc(s1, 30 * MiB).alloc(s1, 30 * MiB).free(s1, 30 * MiB)
            .segFree(s1, 30 * MiB).segAlloc(s1, 30 * MiB).alloc(s1, 30 * MiB)  // driver reused the base
            .segAlloc(small, 2 * MiB).alloc(small, 4096)
            .free(s1, 30 * MiB)
            .segFree(s1, 30 * MiB).free(small, 4096)
            .segFree(small, 2 * MiB);
        const ReplayResult r = replayExact(b.trace, "");
        QVERIFY2(r.exact(), qPrintable(replaytest::describeInexact(r)));
        QCOMPARE(r.emptyCacheSteps.size(), std::size_t{3});
        int emptyCaches = 0;
        for (const Op& op : r.program.ops) emptyCaches += op.kind == OpKind::EmptyCache;
        QCOMPARE(emptyCaches, 3);
        std::map<std::string, std::int64_t> want;
        // Large: A and B (30 MiB each); small: C (4096 B in a 2 MiB segment).
        want["allocation.all.allocated"] = 3; want["allocation.all.freed"] = 3; want["allocation.all.peak"] = 2;
        want["allocation.large_pool.allocated"] = 2; want["allocation.large_pool.freed"] = 2; want["allocation.large_pool.peak"] = 1;
        want["allocation.small_pool.allocated"] = 1; want["allocation.small_pool.freed"] = 1; want["allocation.small_pool.peak"] = 1;
        for (const char* n : {"active"}) {
            want[std::string(n) + ".all.allocated"] = 3; want[std::string(n) + ".all.freed"] = 3; want[std::string(n) + ".all.peak"] = 2;
            want[std::string(n) + ".large_pool.allocated"] = 2; want[std::string(n) + ".large_pool.freed"] = 2; want[std::string(n) + ".large_pool.peak"] = 1;
            want[std::string(n) + ".small_pool.allocated"] = 1; want[std::string(n) + ".small_pool.freed"] = 1; want[std::string(n) + ".small_pool.peak"] = 1;
        }
        for (const char* n : {"allocated_bytes", "active_bytes", "requested_bytes"}) {
            const std::string k(n);
            want[k + ".all.allocated"] = 60 * MiB + 4096; want[k + ".all.freed"] = 60 * MiB + 4096; want[k + ".all.peak"] = 30 * MiB + 4096;
            want[k + ".large_pool.allocated"] = 60 * MiB; want[k + ".large_pool.freed"] = 60 * MiB; want[k + ".large_pool.peak"] = 30 * MiB;
            want[k + ".small_pool.allocated"] = 4096; want[k + ".small_pool.freed"] = 4096; want[k + ".small_pool.peak"] = 4096;
        }
        want["segment.all.allocated"] = 3; want["segment.all.freed"] = 3; want["segment.all.peak"] = 2;
        want["segment.large_pool.allocated"] = 2; want["segment.large_pool.freed"] = 2; want["segment.large_pool.peak"] = 1;
        want["segment.small_pool.allocated"] = 1; want["segment.small_pool.freed"] = 1; want["segment.small_pool.peak"] = 1;
        want["reserved_bytes.all.allocated"] = 62 * MiB; want["reserved_bytes.all.freed"] = 62 * MiB; want["reserved_bytes.all.peak"] = 32 * MiB;
        want["reserved_bytes.large_pool.allocated"] = 60 * MiB; want["reserved_bytes.large_pool.freed"] = 60 * MiB; want["reserved_bytes.large_pool.peak"] = 30 * MiB;
        want["reserved_bytes.small_pool.allocated"] = 2 * MiB; want["reserved_bytes.small_pool.freed"] = 2 * MiB; want["reserved_bytes.small_pool.peak"] = 2 * MiB;
        // 4096 B carved from the 2 MiB small segment leaves a 2,093,056 B inactive split until freed.
        for (const char* p : {"all", "small_pool"}) {
            const std::string sp(p);
            want["inactive_split." + sp + ".allocated"] = 1; want["inactive_split." + sp + ".freed"] = 1; want["inactive_split." + sp + ".peak"] = 1;
            want["inactive_split_bytes." + sp + ".allocated"] = 2093056; want["inactive_split_bytes." + sp + ".freed"] = 2093056;
            want["inactive_split_bytes." + sp + ".peak"] = 2093056;
        }
        want["num_device_alloc"] = 3;
        want["num_device_free"] = 3;
        want["num_sync_all_streams"] = 3;
        expectStats(r.stats, want);
    }

    // [256:1,512:2,1024:4,>:8] (reference §1.3/§1.4 table): 600 MiB+1 -> 768 MiB (2 divisions),
    // 1100 MiB+1 -> 1280 MiB (4), 300 MiB+1 -> 300 MiB+512 (1: no power rounding; segment 302 MiB).
    void roundupListForm() {
        const std::uint64_t a = 0x100000000, c = 0x200000000, d = 0x300000000;
        TraceBuilder b;
        b.segAlloc(a, 768 * MiB).alloc(a, 600 * MiB + 1).segAlloc(c, 1280 * MiB).alloc(c, 1100 * MiB + 1)
            .segAlloc(d, 302 * MiB).alloc(d, 300 * MiB + 1);
        const ReplayResult r = replayExact(b.trace, "roundup_power2_divisions:[256:1,512:2,1024:4,>:8]");
        QVERIFY2(r.exact(), qPrintable(replaytest::describeInexact(r)));
        const std::int64_t blocks = 768 * MiB + 1280 * MiB + 300 * MiB + 512;
        const std::int64_t requested = 2000 * MiB + 3;
        std::map<std::string, std::int64_t> want;
        for (const char* n : {"allocation", "active", "segment"}) statFor(want, n, "large_pool", 3, 3, 0, 3);
        for (const char* n : {"allocated_bytes", "active_bytes"}) statFor(want, n, "large_pool", blocks, blocks, 0, blocks);
        statFor(want, "requested_bytes", "large_pool", requested, requested, 0, requested);
        statFor(want, "reserved_bytes", "large_pool", 2350 * MiB, 2350 * MiB, 0, 2350 * MiB);
        // Only the 302 MiB segment keeps a tail: 2 MiB - 512 B (> 1 MiB, so the block is split).
        statFor(want, "inactive_split", "large_pool", 1, 1, 0, 1);
        statFor(want, "inactive_split_bytes", "large_pool", 2 * MiB - 512, 2 * MiB - 512, 0, 2 * MiB - 512);
        want["num_device_alloc"] = 3;
        expectStats(r.stats, want);
        // The same recording under the single-value form rounds 600 MiB+1 to 640 MiB: diverges.
        const ReplayResult other = replayExact(b.trace, "roundup_power2_divisions:4");
        QVERIFY(other.divergence.has_value());
    }
};

QTEST_GUILESS_MAIN(TestReplayCases)
#include "TestReplayCases.moc"
