// Random strings built from config vocabulary and junk: parseConfig never crashes or hangs, and
// its parts agree with each other whatever the input.
#include <QtTest>

#include <random>

#include "allocator/config/ConfigParser.h"

using namespace allocscope::alloc;

class TestConfigFuzz : public QObject {
    Q_OBJECT

private slots:
    void invariants() {
        static const char* pieces[] = {
            "max_split_size_mb", "expandable_segments", "garbage_collection_threshold", "roundup_power2_divisions",
            "backend", "large_segment_size_mb", "max_non_split_rounding_mb", "per_process_memory_fraction",
            "pinned_num_register_threads", "pinned_reserve_segment_size_mb", "release_lock_on_cudamalloc",
            "garbage_interval", "Expandable_Segments", "foo", ":", ":", ":", ",", ",", ",", "[", "]", ">", ";", "=",
            " ", "\t", "True", "False", "true", "native", "cudaMallocAsync", "0", "1", "3", "4", "19", "20", "40",
            "128", "256", "-5", "0.6", "1.5", "abc", "1e-400", "nan", "99999999999999999999", "\xC3\xA9", "\x01"};
        std::mt19937_64 rng(0xA110C);
        const int rounds = 3000;
        int accepted = 0;
        AllocatorConfig current;
        for (int n = 0; n < rounds; ++n) {
            std::string text;
            const std::size_t count = rng() % 14;
            for (std::size_t k = 0; k < count; ++k) text += pieces[rng() % std::size(pieces)];
            const ParseResult r = parseConfig(text);
            const QString where = QString::fromStdString("input: " + text);
            // PyTorch's verdict and our severities agree.
            QVERIFY2(r.accepted() == !r.hasErrors(), qPrintable(where));
            QVERIFY2(r.accepted() == r.pytorchMessage.empty(), qPrintable(where));
            for (const ConfigDiagnostic& d : r.diagnostics) {
                QVERIFY2(d.offset + d.length <= text.size(), qPrintable(where));
                QVERIFY2(!d.message.empty() && !d.code.empty(), qPrintable(where));
            }
            if (r.accepted()) {
                ++accepted;
                const ParseResult again = parseConfig(formatConfig(r.config));
                QVERIFY2(again.accepted() && again.config == r.config, qPrintable(where));
            }
            // A correction is always something PyTorch accepts.
            if (!r.correctedText.empty()) QVERIFY2(parseConfig(r.correctedText).accepted(), qPrintable(where));
            // Deterministic.
            QVERIFY(parseConfig(text).diagnostics == r.diagnostics);

            // The runtime setter on top of the last accepted config: same agreements, never an abort.
            const ParseResult rt = reparseConfig(text, current);
            QVERIFY2(rt.verdict != Verdict::AbortAtImport, qPrintable(where));
            QVERIFY2(rt.accepted() == !rt.hasErrors(), qPrintable(where));
            if (!rt.correctedText.empty() && !rt.accepted()) {
                QVERIFY2(reparseConfig(rt.correctedText, current).accepted(), qPrintable(where));
            }
            if (r.accepted()) current = r.config;
        }
        // The generator reaches both sides.
        QVERIFY(accepted > rounds / 50);
        QVERIFY(accepted < rounds - rounds / 50);
    }
};

QTEST_GUILESS_MAIN(TestConfigFuzz)
#include "TestConfigFuzz.moc"
