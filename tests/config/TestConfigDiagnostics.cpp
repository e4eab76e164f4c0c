// What parseConfig says beyond PyTorch's verdict: the offending token and where it is, what was
// expected, the nearest valid key, separator notes, warnings for strings PyTorch accepts
// surprisingly, and the corrected string.
#include <QtTest>

#include "allocator/config/ConfigParser.h"

using namespace allocscope::alloc;

namespace {

const ConfigDiagnostic* findCode(const ParseResult& r, const std::string& code) {
    for (const ConfigDiagnostic& d : r.diagnostics) {
        if (d.code == code) return &d;
    }
    return nullptr;
}

QString codes(const ParseResult& r) {
    QStringList out;
    for (const ConfigDiagnostic& d : r.diagnostics) {
        out << QString::fromStdString(std::string(severityName(d.severity)) + ":" + d.code);
    }
    return out.join(' ');
}

}  // namespace

class TestConfigDiagnostics : public QObject {
    Q_OBJECT

private slots:
    void diagnostic_data() {
        QTest::addColumn<QString>("input");
        QTest::addColumn<QString>("code");
        QTest::addColumn<QString>("severity");
        QTest::addColumn<QString>("token");
        QTest::addColumn<int>("offset");
        QTest::addColumn<int>("length");
        QTest::addColumn<QString>("suggestion");

        // Nearest key by edit distance and shared words.
        QTest::newRow("garbage_interval") << "garbage_interval:0.5" << "unknown-key" << "error" << "garbage_interval" << 0
                                          << 16 << "garbage_collection_threshold";
        QTest::newRow("max_split_size") << "max_split_size:128" << "unknown-key" << "error" << "max_split_size" << 0 << 14
                                        << "max_split_size_mb";
        QTest::newRow("Expandable_Segments") << "Expandable_Segments:True" << "unknown-key" << "error"
                                             << "Expandable_Segments" << 0 << 19 << "expandable_segments";
        QTest::newRow("typo spilt") << "max_split_size_mb:128,max_spilt_size_mb:256" << "unknown-key" << "error"
                                    << "max_spilt_size_mb" << 22 << 17 << "max_split_size_mb";
        QTest::newRow("expandable_segment") << "expandable_segment:True" << "unknown-key" << "error"
                                            << "expandable_segment" << 0 << 18 << "expandable_segments";
        QTest::newRow("roundup_power_divisions") << "roundup_power_divisions:4" << "unknown-key" << "error"
                                                 << "roundup_power_divisions" << 0 << 23 << "roundup_power2_divisions";
        QTest::newRow("gc_threshold") << "gc_threshold:0.6" << "unknown-key" << "error" << "gc_threshold" << 0 << 12
                                      << "garbage_collection_threshold";
        QTest::newRow("foo: no suggestion") << "foo:1" << "unknown-key" << "error" << "foo" << 0 << 3 << "";
        QTest::newRow("newer key: no suggestion") << "throw_on_cudamalloc_oom:True" << "unknown-key" << "error"
                                                  << "throw_on_cudamalloc_oom" << 0 << 23 << "";
        // Values.
        QTest::newRow("lowercase true") << "expandable_segments:true" << "bad-bool" << "error" << "true" << 20 << 4
                                        << "True";
        QTest::newRow("FALSE") << "release_lock_on_cudamalloc: FALSE" << "bad-bool" << "error" << "FALSE" << 28 << 5
                               << "False";
        QTest::newRow("too small") << "max_split_size_mb:19" << "out-of-range" << "error" << "19" << 18 << 2 << "";
        QTest::newRow("stoull") << "max_split_size_mb:abc" << "not-a-number" << "error" << "abc" << 18 << 3 << "";
        QTest::newRow("roundup 3") << "roundup_power2_divisions:3" << "not-power-of-2" << "error" << "3" << 25 << 1 << "2";
        QTest::newRow("backend typo") << "backend:cudamallocasync" << "bad-backend" << "error" << "cudamallocasync" << 8
                                      << 15 << "cudaMallocAsync";
        QTest::newRow("backend mismatch") << "backend:native,backend:cudaMallocAsync" << "backend-mismatch" << "error"
                                          << "cudaMallocAsync" << 23 << 15 << "native";
        // Where PyTorch runs off the end.
        QTest::newRow("missing value") << "max_split_size_mb:128,expandable_segments" << "missing-value" << "error"
                                       << "expandable_segments" << 22 << 19 << "";
        QTest::newRow("key with '='") << "max_split_size_mb = 128" << "missing-value" << "error"
                                      << "max_split_size_mb=128" << 0 << 23 << "max_split_size_mb:128";
        QTest::newRow("stray 5 after ';'") << "max_split_size_mb:128;garbage_interval:5" << "missing-value" << "error"
                                           << "5" << 39 << 1 << "";
        QTest::newRow("missing bracket") << "roundup_power2_divisions:[256:1" << "missing-bracket" << "error" << "["
                                         << 25 << 1 << "";
        // Separator notes point at the very character.
        QTest::newRow("';' note") << "max_split_size_mb:128;garbage_interval:5" << "semicolon-separator" << "note" << ";"
                                  << 21 << 1 << "max_split_size_mb:128,garbage_interval:5";
        QTest::newRow("'=' note") << "max_split_size_mb = 128" << "equals-separator" << "note" << "=" << 18 << 1
                                  << "max_split_size_mb : 128";
        QTest::newRow("after ';': garbage_interval") << "max_split_size_mb:128;garbage_interval:5" << "unknown-key"
                                                     << "note" << "garbage_interval" << 22 << 16
                                                     << "garbage_collection_threshold";
        // Accepted, but surprising.
        QTest::newRow("negative wraps") << "max_split_size_mb:-5" << "negative-wraps" << "warning" << "-5" << 18 << 2 << "";
        QTest::newRow("',' where ':' belongs") << "max_split_size_mb,128" << "separator" << "warning" << "," << 17 << 1
                                               << ":";
        QTest::newRow("gc without a fraction") << "garbage_collection_threshold:0.6" << "gc-inert" << "warning"
                                               << "garbage_collection_threshold" << 0 << 28 << "";
        QTest::newRow("ignored under async") << "backend:cudaMallocAsync,max_split_size_mb:128" << "ignored-by-async"
                                             << "warning" << "max_split_size_mb" << 24 << 17 << "";
        QTest::newRow("ignored under async: expandable") << "backend:cudaMallocAsync,expandable_segments:True"
                                                         << "ignored-by-async" << "warning" << "expandable_segments" << 24
                                                         << 19 << "";
        QTest::newRow("above the clamp") << "max_split_size_mb:99999999999999" << "clamped" << "warning"
                                         << "99999999999999" << 18 << 14 << "";
        QTest::newRow("trailing junk") << "max_split_size_mb:128MB" << "trailing-junk" << "warning" << "128MB" << 18 << 5
                                       << "128";
        QTest::newRow("duplicate") << "max_split_size_mb:128,max_split_size_mb:256" << "duplicate-key" << "warning"
                                   << "max_split_size_mb" << 22 << 17 << "";
        QTest::newRow("span keeps inner whitespace") << "expandable_segments:t rue" << "bad-bool" << "error" << "true"
                                                     << 20 << 5 << "True";
    }

    void diagnostic() {
        QFETCH(QString, input);
        QFETCH(QString, code);
        QFETCH(QString, severity);
        QFETCH(QString, token);
        QFETCH(int, offset);
        QFETCH(int, length);
        QFETCH(QString, suggestion);
        const ParseResult r = parseConfig(input.toStdString());
        const ConfigDiagnostic* d = nullptr;
        for (const ConfigDiagnostic& c : r.diagnostics) {
            if (c.code == code.toStdString() && QString::fromUtf8(severityName(c.severity)) == severity) {
                d = &c;
                break;
            }
        }
        QVERIFY2(d != nullptr, qPrintable("no " + severity + ":" + code + " among: " + codes(r)));
        QCOMPARE(QString::fromStdString(d->token), token);
        QCOMPARE(static_cast<int>(d->offset), offset);
        QCOMPARE(static_cast<int>(d->length), length);
        QCOMPARE(QString::fromStdString(d->suggestion), suggestion);
        QVERIFY(!d->message.empty());
        // The span really covers the token (whitespace inside a token included).
        const std::string in = input.toStdString();
        QVERIFY(d->offset + d->length <= in.size());
    }

    // PyTorch-accepted strings never carry errors; rejected ones always do.
    void severityFollowsVerdict_data() {
        QTest::addColumn<QString>("input");
        QTest::newRow("separators") << "max_split_size_mb,128";
        QTest::newRow("negative") << "max_split_size_mb:-5";
        QTest::newRow("async") << "backend:cudaMallocAsync,roundup_power2_divisions:4";
        QTest::newRow("junk") << "garbage_collection_threshold:0.5x,per_process_memory_fraction:0.9";
        QTest::newRow("colon for comma") << "max_split_size_mb:128:expandable_segments:True";
    }
    void severityFollowsVerdict() {
        QFETCH(QString, input);
        const ParseResult r = parseConfig(input.toStdString());
        QVERIFY(r.accepted());
        QVERIFY(!r.hasErrors());
        QVERIFY(r.hasWarnings());
    }

    // §10.5: what backend:cudaMallocAsync never reads, and what it still honours.
    void asyncIgnores_data() {
        QTest::addColumn<QString>("entry");
        QTest::addColumn<bool>("ignored");
        QTest::newRow("max_split_size_mb") << "max_split_size_mb:128" << true;
        QTest::newRow("max_non_split_rounding_mb") << "max_non_split_rounding_mb:64" << true;
        QTest::newRow("roundup_power2_divisions") << "roundup_power2_divisions:4" << true;
        QTest::newRow("garbage_collection_threshold") << "garbage_collection_threshold:0.6" << true;
        QTest::newRow("large_segment_size_mb") << "large_segment_size_mb:40" << true;
        QTest::newRow("expandable_segments") << "expandable_segments:True" << true;
        QTest::newRow("release_lock_on_cudamalloc") << "release_lock_on_cudamalloc:True" << true;
        QTest::newRow("graph_capture_record_stream_reuse") << "graph_capture_record_stream_reuse:True" << true;
        QTest::newRow("per_process_memory_fraction") << "per_process_memory_fraction:0.5" << false;
        QTest::newRow("pinned_use_cuda_host_register") << "pinned_use_cuda_host_register:True" << false;
        QTest::newRow("pinned_num_register_threads") << "pinned_num_register_threads:4" << false;
        QTest::newRow("pinned_use_background_threads") << "pinned_use_background_threads:True" << false;
        QTest::newRow("pinned_reserve_segment_size_mb") << "pinned_reserve_segment_size_mb:8" << false;
    }
    void asyncIgnores() {
        QFETCH(QString, entry);
        QFETCH(bool, ignored);
        const ParseResult async = parseConfig(("backend:cudaMallocAsync," + entry).toStdString());
        QVERIFY(async.accepted());
        QCOMPARE(findCode(async, "ignored-by-async") != nullptr, ignored);
        // Under the native backend the same entry is not flagged.
        QVERIFY(findCode(parseConfig(entry.toStdString()), "ignored-by-async") == nullptr);
    }

    void expectedIsFilled() {
        const ParseResult r = parseConfig("expandable_segments:yes");
        const ConfigDiagnostic* d = findCode(r, "bad-bool");
        QVERIFY(d);
        QCOMPARE(QString::fromStdString(d->expected), QString("True or False"));
        QCOMPARE(QString::fromStdString(d->suggestion), QString("True"));
        const ParseResult m = parseConfig("max_split_size_mb:");
        QVERIFY(findCode(m, "missing-value"));
        QVERIFY(QString::fromStdString(findCode(m, "missing-value")->expected).contains("MiB"));
    }

    // No warning where there is nothing to warn about.
    void cleanStringsAreQuiet() {
        for (const char* s : {"max_split_size_mb:128", "expandable_segments:True",
                              "garbage_collection_threshold:0.6,per_process_memory_fraction:0.8",
                              "roundup_power2_divisions:[256:1,512:2,1024:4,>:8]", ""}) {
            const ParseResult r = parseConfig(s);
            QVERIFY2(r.diagnostics.empty(), qPrintable(QString(s) + " -> " + codes(r)));
        }
    }

    // Errors come first; within a severity, input order.
    void ordering() {
        const ParseResult r = parseConfig("max_split_size_mb:-5,foo:1,expandable_segments:true");
        QVERIFY(r.diagnostics.size() >= 3);
        QCOMPARE(r.diagnostics[0].severity, DiagnosticSeverity::Error);
        QCOMPARE(QString::fromStdString(r.diagnostics[0].token), QString("foo"));
        QCOMPARE(QString::fromStdString(r.diagnostics[1].token), QString("true"));
        QCOMPARE(r.diagnostics.back().severity == DiagnosticSeverity::Error, false);
    }

    void corrected_data() {
        QTest::addColumn<QString>("input");
        QTest::addColumn<QString>("corrected");
        QTest::newRow("equals") << "max_split_size_mb=128" << "max_split_size_mb:128";
        QTest::newRow("equals, spaces") << "max_split_size_mb = 128" << "max_split_size_mb:128";
        QTest::newRow("semicolon, bad key dropped") << "max_split_size_mb:128;garbage_interval:5" << "max_split_size_mb:128";
        QTest::newRow("semicolon, good pair") << "max_split_size_mb:128;expandable_segments:True"
                                              << "max_split_size_mb:128,expandable_segments:True";
        QTest::newRow("garbage_interval with a fraction") << "garbage_interval:0.6,per_process_memory_fraction:0.9"
                                                          << "garbage_collection_threshold:0.6,per_process_memory_fraction:0.9";
        QTest::newRow("case") << "Expandable_Segments:true" << "expandable_segments:True";
        QTest::newRow("lowercase bool") << "expandable_segments:true" << "expandable_segments:True";
        QTest::newRow("missing value dropped") << "max_split_size_mb:128,expandable_segments" << "max_split_size_mb:128";
        QTest::newRow("without _mb") << "max_split_size:128" << "max_split_size_mb:128";
        QTest::newRow("backend case") << "backend:CudaMallocAsync" << "backend:cudaMallocAsync";
        QTest::newRow("accepted: canonical") << " max_split_size_mb , 128 " << "max_split_size_mb:128";
        QTest::newRow("newer key dropped") << "throw_on_cudamalloc_oom:True,expandable_segments:True"
                                           << "expandable_segments:True";
        QTest::newRow("too small: no correction") << "max_split_size_mb:5" << "";
        QTest::newRow("one entry per key, last value") << "expandable_segments:true,max_split_size_mb:64,expandable_segments:False"
                                                       << "expandable_segments:False,max_split_size_mb:64";
        QTest::newRow("backend mismatch") << "backend:native,backend:cudaMallocAsync" << "backend:native";
    }

    void corrected() {
        QFETCH(QString, input);
        QFETCH(QString, corrected);
        const ParseResult r = parseConfig(input.toStdString());
        QCOMPARE(QString::fromStdString(r.correctedText), corrected);
        if (!corrected.isEmpty()) QVERIFY(parseConfig(r.correctedText).accepted());
    }
};

QTEST_GUILESS_MAIN(TestConfigDiagnostics)
#include "TestConfigDiagnostics.moc"
