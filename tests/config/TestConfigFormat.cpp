// formatConfig: canonical text (only non-default options, fixed order, roundup list/single form)
// and the round trip parseConfig(formatConfig(c)).config == c over a fuzzed set of valid configs.
#include <QtTest>

#include <random>

#include "allocator/config/ConfigParser.h"

using namespace allocscope::alloc;

namespace {

// A random config in the domain parseConfig can produce: MiB multiples within PyTorch's bounds,
// power-of-2 roundup entries (list or single), fractions, pinned options.
AllocatorConfig randomConfig(std::mt19937_64& rng) {
    auto coin = [&](int percent) { return static_cast<int>(rng() % 100) < percent; };
    auto pick = [&](std::uint64_t lo, std::uint64_t hi) { return lo + rng() % (hi - lo + 1); };
    AllocatorConfig c;
    if (coin(20)) c.backend = Backend::CudaMallocAsync;
    if (coin(30)) c.largeSegmentSize = pick(11, 512) * kMiB;
    const std::uint64_t minMiB = c.largeSegmentSize / kMiB;
    c.maxNonSplitRounding = c.largeSegmentSize;
    if (coin(50)) c.maxSplitSize = (coin(10) ? (kUnlimited / kMiB) : pick(minMiB, 100000)) * kMiB;
    if (coin(30)) c.maxNonSplitRounding = pick(minMiB, 4096) * kMiB;
    if (coin(50)) {
        if (coin(30)) {
            c.roundupPower2Divisions.fill(1ull << pick(0, 6));
        } else {
            for (auto& v : c.roundupPower2Divisions) v = coin(20) ? 0 : (1ull << pick(0, 5));
            if (coin(50)) {  // long equal runs, like real lists
                const std::size_t from = pick(0, 15);
                for (std::size_t i = from; i < 16; ++i) c.roundupPower2Divisions[i] = c.roundupPower2Divisions[from];
            }
        }
    }
    if (coin(40)) c.garbageCollectionThreshold = static_cast<double>(pick(1, 999999)) / 1e6;
    if (coin(10)) c.garbageCollectionThreshold = std::nextafter(1.0, 0.0);
    if (coin(40)) c.perProcessMemoryFraction = static_cast<double>(pick(0, 1000)) / 1000.0;
    if (coin(10)) c.perProcessMemoryFraction = 1.0 / 3.0;
    c.expandableSegments = coin(40);
    c.releaseLockOnCudaMalloc = coin(20);
    c.graphCaptureRecordStreamReuse = coin(20);
    c.pinnedUseCudaHostRegister = coin(20);
    if (coin(30)) c.pinnedNumRegisterThreads = 1ull << pick(0, 7);
    c.pinnedUseBackgroundThreads = coin(20);
    if (coin(30)) c.pinnedReserveSegmentSizeMb = pick(1, 1ull << 40);
    return c;
}

}  // namespace

class TestConfigFormat : public QObject {
    Q_OBJECT

private slots:
    void defaultsFormatEmpty() {
        QCOMPARE(QString::fromStdString(formatConfig(AllocatorConfig{})), QString());
        QVERIFY(parseConfig(formatConfig(AllocatorConfig{})).config == AllocatorConfig{});
    }

    void canonical_data() {
        QTest::addColumn<QString>("input");
        QTest::addColumn<QString>("canonical");
        // Fixed key order whatever the input order.
        QTest::newRow("order") << "expandable_segments:True,garbage_collection_threshold:0.6,max_split_size_mb:512,"
                                  "backend:native,per_process_memory_fraction:0.75"
                               << "max_split_size_mb:512,garbage_collection_threshold:0.6,expandable_segments:True,"
                                  "per_process_memory_fraction:0.75";
        QTest::newRow("all equal list -> single") << "roundup_power2_divisions:[1:4,>:4]" << "roundup_power2_divisions:4";
        QTest::newRow("single stays single") << "roundup_power2_divisions:8" << "roundup_power2_divisions:8";
        QTest::newRow("redundant list items collapse") << "roundup_power2_divisions:[64:1,128:1,256:1,512:2,>:2]"
                                                       << "roundup_power2_divisions:[256:1,>:2]";
        QTest::newRow("middle runs listed per interval") << "roundup_power2_divisions:[2:4,8:2,>:1]"
                                                         << "roundup_power2_divisions:[2:4,4:0,8:2,>:1]";
        QTest::newRow("all zero list -> omitted") << "roundup_power2_divisions:[32768:0]" << "";
        QTest::newRow("large segment sets the non-split default") << "large_segment_size_mb:64,max_non_split_rounding_mb:64"
                                                                  << "large_segment_size_mb:64";
        QTest::newRow("non-split differs from large") << "large_segment_size_mb:64,max_non_split_rounding_mb:100"
                                                      << "large_segment_size_mb:64,max_non_split_rounding_mb:100";
        QTest::newRow("fraction 1 is kept (explicit)") << "per_process_memory_fraction:1.0" << "per_process_memory_fraction:1";
        QTest::newRow("async first") << "max_split_size_mb:128,backend:cudaMallocAsync"
                                     << "backend:cudaMallocAsync,max_split_size_mb:128";
        QTest::newRow("pinned") << "pinned_reserve_segment_size_mb:8,pinned_num_register_threads:4,"
                                   "pinned_use_background_threads:True,pinned_use_cuda_host_register:True"
                                << "pinned_use_cuda_host_register:True,pinned_num_register_threads:4,"
                                   "pinned_use_background_threads:True,pinned_reserve_segment_size_mb:8";
    }

    void canonical() {
        QFETCH(QString, input);
        QFETCH(QString, canonical);
        const ParseResult r = parseConfig(input.toStdString());
        QVERIFY2(r.accepted(), r.pytorchMessage.c_str());
        QCOMPARE(QString::fromStdString(formatConfig(r.config)), canonical);
    }

    // Deterministic fuzz: 3000 random valid configs survive format -> parse unchanged, PyTorch
    // accepts every canonical string, and formatting is idempotent.
    void roundTripFuzz() {
        std::mt19937_64 rng(20260522);
        for (int n = 0; n < 3000; ++n) {
            const AllocatorConfig c = randomConfig(rng);
            const std::string text = formatConfig(c);
            const ParseResult r = parseConfig(text);
            QVERIFY2(r.accepted(), qPrintable(QString::fromStdString(text + " -> " + r.pytorchMessage)));
            QVERIFY2(r.config == c, qPrintable(QString::fromStdString(text)));
            QCOMPARE(QString::fromStdString(formatConfig(r.config)), QString::fromStdString(text));
            QVERIFY2(!r.hasErrors(), qPrintable(QString::fromStdString(text)));
        }
    }

    // Strings PyTorch accepts round-trip through the canonical form too.
    void acceptedStringsRoundTrip_data() {
        QTest::addColumn<QString>("input");
        for (const char* s : {"max_split_size_mb,128", "max_split_size_mb:-5", " expandable_segments : True , ",
                              "roundup_power2_divisions:[>:4,256:1]", "roundup_power2_divisions:[1024:4,256:1]",
                              "roundup_power2_divisions:[65536:2]", "garbage_collection_threshold:0x0.8",
                              "garbage_collection_threshold:1e-300", "per_process_memory_fraction:0.1",
                              "large_segment_size_mb:18446744073709551615",
                              "release_lock_on_hipmalloc:True", "max_split_size_mb:20,max_non_split_rounding_mb:-1"}) {
            QTest::newRow(s) << QString(s);
        }
    }
    void acceptedStringsRoundTrip() {
        QFETCH(QString, input);
        const ParseResult r = parseConfig(input.toStdString());
        QVERIFY2(r.accepted(), r.pytorchMessage.c_str());
        const ParseResult again = parseConfig(formatConfig(r.config));
        QVERIFY(again.accepted());
        QVERIFY(again.config == r.config);
    }
};

QTEST_GUILESS_MAIN(TestConfigFormat)
#include "TestConfigFormat.moc"
