// One rule of PyTorch 2.11's allocator per test, each with hand-computed expectations taken from
// ../shared/reference/pytorch-allocator-2.11.md (§ numbers in the comments).
#include <QtTest>

#include "allocator/core/FormatSize.h"
#include "tests/allocator/AllocatorHarness.h"

using namespace allocscope::alloc;
using namespace allocscope::alloc::testing;

namespace {
AllocatorConfig roundupAll(std::uint64_t divisions) {
    AllocatorConfig config;
    config.roundupPower2Divisions.fill(divisions);
    return config;
}
// [256:1,512:2,1024:4,>:8]: key K sets entry log2(K); the first key fills lower entries, '>'
// fills the entries after the last key (§1.3).
AllocatorConfig roundupList() {
    AllocatorConfig config;
    for (std::size_t i = 0; i <= 8; ++i) config.roundupPower2Divisions[i] = 1;
    config.roundupPower2Divisions[9] = 2;
    config.roundupPower2Divisions[10] = 4;
    for (std::size_t i = 11; i < 16; ++i) config.roundupPower2Divisions[i] = 8;
    return config;
}
std::uint64_t segmentSizeFor(const AllocatorConfig& config, std::uint64_t request) {
    Harness h(config);
    h.alloc(request);
    const auto segments = h.eventsOf(EventAction::SegmentAlloc);
    return segments.size() == 1 ? segments[0].size : 0;
}
}  // namespace

class TestAllocatorRules : public QObject {
    Q_OBJECT
private slots:
    void roundSizeDefault() {
        Harness h;
        QCOMPARE(h.allocator->roundSize(1), 512ull);
        QCOMPARE(h.allocator->roundSize(511), 512ull);
        QCOMPARE(h.allocator->roundSize(512), 512ull);
        QCOMPARE(h.allocator->roundSize(513), 1024ull);
        QCOMPARE(h.allocator->roundSize(1200), 1536ull);
        QCOMPARE(h.allocator->roundSize(40 * MiB + 1), 40 * MiB + 512);
    }
    void roundSizePowerOfTwoDivisions_data() {
        QTest::addColumn<quint64>("request");
        QTest::addColumn<quint64>("list");    // [256:1,512:2,1024:4,>:8]
        QTest::addColumn<quint64>("single");  // roundup_power2_divisions:4
        // The §1.4 table (observed on torch 2.11).
        QTest::newRow("1200 B") << quint64(1200) << quint64(1536) << quint64(1536);
        QTest::newRow("5000 B") << quint64(5000) << quint64(5120) << quint64(5120);
        QTest::newRow("40 MiB+1") << quint64(40 * MiB + 1) << quint64(40 * MiB + 512) << quint64(48 * MiB);
        QTest::newRow("300 MiB+1") << quint64(300 * MiB + 1) << quint64(300 * MiB + 512) << quint64(320 * MiB);
        QTest::newRow("600 MiB+1") << quint64(600 * MiB + 1) << quint64(768 * MiB) << quint64(640 * MiB);
        QTest::newRow("1100 MiB+1") << quint64(1100 * MiB + 1) << quint64(1280 * MiB) << quint64(1280 * MiB);
        QTest::newRow("2100 MiB+1") << quint64(2100 * MiB + 1) << quint64(2304 * MiB) << quint64(2560 * MiB);
        // Exact powers of two are kept; 2048 B is not > 512 x 4, so plain 512 rounding.
        QTest::newRow("64 MiB") << quint64(64 * MiB) << quint64(64 * MiB) << quint64(64 * MiB);
        QTest::newRow("2049 B") << quint64(2049) << quint64(2560) << quint64(2560);
    }
    void roundSizePowerOfTwoDivisions() {
        QFETCH(quint64, request);
        QFETCH(quint64, list);
        QFETCH(quint64, single);
        Harness listed(roundupList());
        Harness uniform(roundupAll(4));
        QCOMPARE(quint64(listed.allocator->roundSize(request)), list);
        QCOMPARE(quint64(uniform.allocator->roundSize(request)), single);
        // And the allocated bytes really are the rounded size.
        QVERIFY(uniform.alloc(request) != 0);
        QCOMPARE(quint64(uniform.stats().allocated_bytes[kAggregate].current), single);
    }
    void roundupOneDivisionIsPlainRounding() {
        Harness h(roundupAll(1));
        QCOMPARE(h.allocator->roundSize(40 * MiB + 1), 40 * MiB + 512);
    }

    void segmentSizes_data() {
        QTest::addColumn<quint64>("request");
        QTest::addColumn<quint64>("segment");
        // §1.6, observed list.
        QTest::newRow("1 B") << quint64(1) << quint64(2 * MiB);
        QTest::newRow("1 MiB") << quint64(MiB) << quint64(2 * MiB);
        QTest::newRow("1 MiB+1") << quint64(MiB + 1) << quint64(20 * MiB);
        QTest::newRow("10 MiB-1 KiB") << quint64(10 * MiB - KiB) << quint64(20 * MiB);
        QTest::newRow("10 MiB") << quint64(10 * MiB) << quint64(10 * MiB);
        QTest::newRow("12 MiB+1") << quint64(12 * MiB + 1) << quint64(14 * MiB);
        QTest::newRow("101 MiB") << quint64(101 * MiB) << quint64(102 * MiB);
        QTest::newRow("121 MiB") << quint64(121 * MiB) << quint64(122 * MiB);
        QTest::newRow("300 MiB") << quint64(300 * MiB) << quint64(300 * MiB);
    }
    void segmentSizes() {
        QFETCH(quint64, request);
        QFETCH(quint64, segment);
        QCOMPARE(quint64(segmentSizeFor(AllocatorConfig{}, request)), segment);
    }
    void largeSegmentSizeOption() {
        AllocatorConfig config;
        config.largeSegmentSize = 40 * MiB;
        QCOMPARE(segmentSizeFor(config, 5 * MiB), 40 * MiB);
        QCOMPARE(segmentSizeFor(config, 12 * MiB), 12 * MiB);
    }
    void oneMiBIsSmallPool() {
        Harness h;
        h.alloc(MiB);
        QCOMPARE(h.stats().allocated_bytes[kSmallPool].current, std::int64_t(MiB));
        h.alloc(MiB + 1);
        QCOMPARE(h.stats().allocated_bytes[kLargePool].current, std::int64_t(MiB + 512));
        QCOMPARE(h.check(), std::string());
    }

    // §3.2: a large block splits only if the tail is strictly more than 1 MiB.
    void largeSplitNeedsMoreThanOneMiB() {
        Harness whole;
        whole.alloc(19 * MiB);  // 20 MiB segment, tail exactly 1 MiB: handed out whole
        QCOMPARE(whole.stats().allocated_bytes[kAggregate].current, std::int64_t(20 * MiB));
        QCOMPARE(whole.stats().inactive_split[kAggregate].current, std::int64_t(0));
        Harness split;
        split.alloc(19 * MiB - 512);  // tail 1 MiB + 512: split
        QCOMPARE(split.stats().allocated_bytes[kAggregate].current, std::int64_t(19 * MiB - 512));
        QCOMPARE(split.stats().inactive_split_bytes[kAggregate].current, std::int64_t(MiB + 512));
        QCOMPARE(split.check(), std::string());
    }
    // §3.2: expandable segments split when at least 512 B remain, in the large pool too.
    void expandableSplitsAt512() {
        Harness h(expandableConfig());
        const std::uint64_t a = h.alloc(20 * MiB - 512);
        QVERIFY(a != 0);
        QCOMPARE(h.stats().allocated_bytes[kAggregate].current, std::int64_t(20 * MiB - 512));
        const auto segments = h.allocator->segments();
        QCOMPARE(segments.size(), std::size_t(1));
        QCOMPARE(segments[0].blocks.size(), std::size_t(2));
        QCOMPARE(segments[0].blocks[1].size, 512ull);
        QCOMPARE(segments[0].blocks[1].state, BlockState::Inactive);
        QCOMPARE(h.stats().inactive_split[kAggregate].current, std::int64_t(0));  // never for expandable
        QCOMPARE(h.check(), std::string());
    }
    // A small-pool block is split whenever anything (>= 512 B) remains.
    void smallSplitsAnyRemainder() {
        Harness h;
        const std::uint64_t a = h.alloc(MiB);
        const std::uint64_t b = h.alloc(MiB - 1024);  // leaves a 1024 B tail
        QVERIFY(a != 0 && b != 0);
        QCOMPARE(h.stats().inactive_split_bytes[kSmallPool].current, std::int64_t(1024));
        const std::uint64_t c = h.alloc(512);  // 512 B remain: split
        QCOMPARE(c, b + MiB - 1024);
        QCOMPARE(h.stats().inactive_split_bytes[kSmallPool].current, std::int64_t(512));
        QCOMPARE(h.stats().allocated_bytes[kSmallPool].current, std::int64_t(2 * MiB - 512));
        QCOMPARE(h.check(), std::string());
    }

    // §3.1 step 4 with max_split_size_mb:64 (observed).
    void oversizeRules() {
        Harness h(maxSplitConfig(64));
        const std::uint64_t big = h.alloc(100 * MiB);
        QVERIFY(h.free(big));
        QCOMPARE(h.stats().oversize_segments.current, std::int64_t(1));
        // 50 MiB < max_split and the cached block is oversize: miss, new 50 MiB segment.
        const std::uint64_t fifty = h.alloc(50 * MiB);
        QVERIFY(fifty != big);
        QCOMPARE(h.stats().segment[kAggregate].current, std::int64_t(2));
        // 80 MiB: 100 >= 80 + 20 (strict tolerance): miss.
        const std::uint64_t eighty = h.alloc(80 * MiB);
        QVERIFY(eighty != big);
        QCOMPARE(h.stats().segment[kAggregate].current, std::int64_t(3));
        QVERIFY(h.free(eighty));
        // 90 MiB: within tolerance, the 100 MiB block is used whole (best fit picks the smallest
        // >= 90 MiB, the 100 MiB block, over the 80 MiB one that is too small).
        const std::uint64_t ninety = h.alloc(90 * MiB);
        QCOMPARE(ninety, big);
        QCOMPARE(h.stats().allocated_bytes[kAggregate].current, std::int64_t(150 * MiB));
        QCOMPARE(h.stats().requested_bytes[kAggregate].current, std::int64_t(140 * MiB));
        QCOMPARE(h.stats().oversize_allocations.current, std::int64_t(1));
        // 60 MiB + 512 B (< max_split): the cached 80 MiB block is oversize: miss.
        QVERIFY(h.alloc(60 * MiB + 512) != eighty);
        QCOMPARE(h.stats().max_split_size, std::int64_t(64 * MiB));
        QCOMPARE(h.check(), std::string());
    }
    void oversizeToleranceBoundary() {
        Harness h(maxSplitConfig(64));
        const std::uint64_t big = h.alloc(100 * MiB);
        QVERIFY(h.free(big));
        QVERIFY(h.alloc(80 * MiB) != big);  // 100 MiB == 80 + 20 exactly: rejected
        Harness g(maxSplitConfig(64));
        const std::uint64_t big2 = g.alloc(100 * MiB);
        QVERIFY(g.free(big2));
        QCOMPARE(g.alloc(80 * MiB + 512), big2);  // 100 < 80 MiB + 512 + 20 MiB: accepted
    }
    void defaultMaxSplitStatIsMinusOne() {
        Harness h;
        QCOMPARE(h.stats().max_split_size, std::int64_t(-1));
    }

    // §4.1 scaled down: 4 GiB device, fraction 0.5 (cap 2 GiB), threshold 0.5 (1 GiB).
    void gcFreesOldBlocksOnly() {
        AllocatorConfig config;
        config.garbageCollectionThreshold = 0.5;
        config.perProcessMemoryFraction = 0.5;
        Harness h(config, 4 * GiB);
        std::vector<std::uint64_t> big;
        const std::uint64_t ticker = h.alloc(MiB + MiB / 2, 1);  // stream 1 keeps the clock ticking
        for (int i = 0; i < 24; ++i) big.push_back(h.alloc(64 * MiB));
        for (int i = 0; i < 11; ++i) QVERIFY(h.free(big[i]));  // 11 old
        QVERIFY(h.free(ticker));
        for (int i = 0; i < 40; ++i) QVERIFY(h.free(h.alloc(MiB + MiB / 2, 1)));  // 40 searches
        for (int i = 11; i < 24; ++i) QVERIFY(h.free(big[i]));  // 13 young
        QCOMPARE(h.stats().reserved_bytes[kAggregate].current, std::int64_t(24 * 64 * MiB + 20 * MiB));
        const std::size_t mark = h.mark();
        QVERIFY(h.alloc(96 * MiB) != 0);
        // Ages: old 41, young 1, the stream-1 block 1: average 18.6. The 11 old ones go; then
        // 704 MiB reclaimed >= the 532 MiB target, so no second pass.
        std::vector<std::uint64_t> freed;
        for (const Event& event : h.since(mark)) {
            if (event.action == EventAction::SegmentFree) {
                QCOMPARE(event.cause, EventCause::Gc);
                freed.push_back(event.address);
            }
        }
        std::sort(freed.begin(), freed.end());
        std::vector<std::uint64_t> old(big.begin(), big.begin() + 11);
        std::sort(old.begin(), old.end());
        QCOMPARE(freed, old);
        QCOMPARE(h.stats().reserved_bytes[kAggregate].current, std::int64_t(13 * 64 * MiB + 20 * MiB + 96 * MiB));
        QCOMPARE(h.stats().num_sync_all_streams, std::int64_t(0));  // GC does not synchronize
        QCOMPARE(h.check(), std::string());
    }
    void gcPassDoesNotStopAtTarget() {
        AllocatorConfig config;
        config.garbageCollectionThreshold = 0.5;
        config.perProcessMemoryFraction = 0.5;
        Harness h(config, 4 * GiB);
        std::vector<std::uint64_t> big;
        const std::uint64_t ticker = h.alloc(MiB + MiB / 2, 1);
        for (int i = 0; i < 24; ++i) big.push_back(h.alloc(64 * MiB));
        for (std::uint64_t address : big) QVERIFY(h.free(address));  // all 24 the same age
        QVERIFY(h.free(ticker));
        for (int i = 0; i < 40; ++i) QVERIFY(h.free(h.alloc(MiB + MiB / 2, 1)));
        QVERIFY(h.alloc(96 * MiB) != 0);
        // Target 532 MiB, but the whole pass runs: all 24 equal-age blocks are freed.
        QCOMPARE(h.stats().num_device_free, std::int64_t(24));
        QCOMPARE(h.stats().reserved_bytes[kAggregate].current, std::int64_t(20 * MiB + 96 * MiB));
        QCOMPARE(h.check(), std::string());
    }
    void gcNeedsAFraction() {
        AllocatorConfig config;
        config.garbageCollectionThreshold = 0.5;
        Harness h(config, 4 * GiB);
        std::vector<std::uint64_t> big;
        for (int i = 0; i < 24; ++i) big.push_back(h.alloc(64 * MiB));
        for (std::uint64_t address : big) QVERIFY(h.free(address));
        QVERIFY(h.alloc(96 * MiB) != 0);
        QCOMPARE(h.stats().num_device_free, std::int64_t(0));
    }

    // §4.3 (observed): oversize release frees 122 + 102 MiB for a 200 MiB request, no retry.
    void releaseAvailableCachedBlocksBeforeRetry() {
        Harness h(maxSplitConfig(64), GiB);
        std::vector<std::uint64_t> cached;
        for (std::uint64_t mib : {100, 50, 122, 102}) cached.push_back(h.alloc(mib * MiB));
        for (std::uint64_t address : cached) QVERIFY(h.free(address));
        h.allocator->setMemoryFraction(524.0 / 1024.0);  // cap = reserved (374 MiB) + 150 MiB
        const std::size_t mark = h.mark();
        QVERIFY(h.alloc(200 * MiB) != 0);
        const auto events = h.since(mark);
        QCOMPARE(events.size(), std::size_t(4));
        QCOMPARE(events[0].action, EventAction::SegmentFree);
        QCOMPARE(events[0].size, 122 * MiB);
        QCOMPARE(events[0].cause, EventCause::OversizeRelease);
        QCOMPARE(events[1].size, 102 * MiB);
        QCOMPARE(events[2].action, EventAction::SegmentAlloc);
        QCOMPARE(events[2].size, 200 * MiB);
        QCOMPARE(events[3].action, EventAction::Alloc);
        QCOMPARE(h.stats().num_alloc_retries, std::int64_t(0));
        QCOMPARE(h.stats().num_sync_all_streams, std::int64_t(0));
        QCOMPARE(h.stats().num_device_free, std::int64_t(2));
        QCOMPARE(h.check(), std::string());
    }
    // §4 step 4e: release_cached_blocks then one retry, counted even when it succeeds.
    void retryCountsEvenOnSuccess() {
        Harness h({}, GiB);
        const std::uint64_t a = h.alloc(100 * MiB);
        const std::uint64_t b = h.alloc(50 * MiB);
        QVERIFY(h.free(a) && h.free(b));
        h.allocator->setMemoryFraction(200.0 / 1024.0);
        const std::size_t mark = h.mark();
        QVERIFY(h.alloc(120 * MiB) != 0);
        const auto events = h.since(mark);
        QCOMPARE(events.size(), std::size_t(4));
        QCOMPARE(events[0].cause, EventCause::OomRetry);
        QCOMPARE(events[1].cause, EventCause::OomRetry);
        QCOMPARE(events[2].action, EventAction::SegmentAlloc);
        QCOMPARE(events[2].cause, EventCause::Program);
        QCOMPARE(h.stats().num_alloc_retries, std::int64_t(1));
        QCOMPARE(h.stats().num_sync_all_streams, std::int64_t(1));
        QCOMPARE(h.stats().num_ooms, std::int64_t(0));
        QCOMPARE(h.check(), std::string());
    }
    void fractionCapUsesSegmentSize() {
        // Cap = 19 MiB. 2 MiB is a large-pool request whose alloc_size is a 20 MiB segment:
        // 20 MiB > cap, so it fails although only 2 MiB were asked for (§4.2 step 3).
        Harness h({}, GiB);
        h.allocator->setMemoryFraction(19.0 / 1024.0);
        QCOMPARE(h.alloc(2 * MiB), std::uint64_t(0));
        QCOMPARE(h.allocator->lastOom().allocSize, 20 * MiB);
        QVERIFY(h.alloc(MiB) != 0);  // small pool: 2 MiB segment fits
        h.allocator->setMemoryFraction(1.0);  // cap removed
        QVERIFY(h.alloc(2 * MiB) != 0);
    }

    void formatSizeBoundaries() {
        QCOMPARE(formatSize(1024), std::string("1024 bytes"));
        QCOMPARE(formatSize(1025), std::string("1.00 KiB"));
        QCOMPARE(formatSize(MiB), std::string("1024.00 KiB"));
        QCOMPARE(formatSize(GiB), std::string("1024.00 MiB"));
        QCOMPARE(formatSize(kH100Total), std::string("79.18 GiB"));
    }
    // §4.5: the observed message, reproduced on a device set up like the observation.
    void oomMessage() {
        Harness h({}, kH100Total, 557'137'920ull);
        h.device.setProcessContextMemory(518 * MiB);
        QVERIFY(h.alloc(3 * MiB) != 0);
        QVERIFY(h.alloc(5 * MiB) != 0);
        const std::uint64_t huge = 35'184'372'088'832ull;  // 32 TiB
        const std::size_t mark = h.mark();
        QCOMPARE(h.alloc(huge), std::uint64_t(0));
        const std::string expected =
            "CUDA out of memory. Tried to allocate 32768.00 GiB. GPU 0 has a total capacity of 79.18 GiB of "
            "which 78.64 GiB is free. Including non-PyTorch memory, this process has 538.00 MiB memory in use. "
            "Of the allocated memory 8.00 MiB is allocated by PyTorch, and 12.00 MiB is reserved by PyTorch but "
            "unallocated. If reserved but unallocated memory is large try setting "
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for "
            "Memory Management  (https://docs.pytorch.org/docs/stable/notes/cuda.html"
            "#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)";
        QCOMPARE(h.allocator->lastOom().message, expected);
        QCOMPARE(h.stats().num_ooms, std::int64_t(1));
        QCOMPARE(h.stats().num_alloc_retries, std::int64_t(1));
        QCOMPARE(h.stats().num_sync_all_streams, std::int64_t(1));
        const auto events = h.since(mark);
        QCOMPARE(events.back().action, EventAction::Oom);
        QCOMPARE(events.back().size, huge);  // rounded request
        QCOMPARE(events.back().address, h.device.freeMemory());
        QCOMPARE(h.check(), std::string());
    }
    void oomMessageWithFraction() {
        Harness h({}, kH100Total, 557'137'920ull);
        h.device.setProcessContextMemory(518 * MiB);
        h.allocator->setMemoryFraction(0.25);
        QVERIFY(h.alloc(3 * MiB) != 0);
        QVERIFY(h.alloc(5 * MiB) != 0);
        QCOMPARE(h.alloc(35'184'372'088'832ull), std::uint64_t(0));
        const std::string& message = h.allocator->lastOom().message;
        QVERIFY2(message.find("this process has 538.00 MiB memory in use. 19.79 GiB allowed; Of the allocated "
                              "memory 8.00 MiB") != std::string::npos,
                 message.c_str());
    }
    void oomOneByteSaysSegmentSize() {
        Harness h({}, GiB);
        h.device.setProcessContextMemory(std::nullopt);  // no NVML: no process line
        h.allocator->setMemoryFraction(0.0);
        QCOMPARE(h.alloc(1), std::uint64_t(0));
        const OomInfo& oom = h.allocator->lastOom();
        QCOMPARE(oom.roundedSize, 512ull);
        QCOMPARE(oom.allocSize, 2 * MiB);
        QVERIFY(oom.message.rfind("CUDA out of memory. Tried to allocate 2.00 MiB. GPU 0 has a total capacity of "
                                  "1024.00 MiB of which 1024.00 MiB is free. 0 bytes allowed; Of the allocated memory "
                                  "0 bytes is allocated by PyTorch, and 0 bytes is reserved",
                                  0) == 0);
        QCOMPARE(h.eventsOf(EventAction::Oom).at(0).size, 512ull);
    }
    void oomOnDeviceWithoutFraction() {
        Harness h({}, GiB);
        QVERIFY(h.alloc(600 * MiB) != 0);
        QCOMPARE(h.alloc(600 * MiB), std::uint64_t(0));
        QVERIFY(h.allocator->lastOom().message.find("Tried to allocate 600.00 MiB") != std::string::npos);
        QCOMPARE(h.check(), std::string());
    }
    void zeroAndExabyteRequests() {
        Harness h;
        QVERIFY(!h.allocator->malloc(0, 0).has_value());
        QCOMPARE(h.events.events.size(), std::size_t(0));
        QVERIFY(!h.allocator->malloc(kOneExaByteForTest, 0).has_value());
        QCOMPARE(h.allocator->lastOom().message,
                 std::string("CUDA out of memory. Tried to allocate more than 1EB memory."));
        QCOMPARE(h.stats().num_ooms, std::int64_t(0));
    }

private:
    static constexpr std::uint64_t kOneExaByteForTest = 1152921504606846976ull;
};

QTEST_GUILESS_MAIN(TestAllocatorRules)
#include "TestAllocatorRules.moc"
