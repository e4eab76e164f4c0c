// What PyTorch 2.11 does with each config string of reference §10, §16(c) and §17: accepted or
// not, how it fails (abort at import, ValueError or RuntimeError at CUDA init) and its exact
// message; for accepted strings, the canonical form of the parsed config.
#include <QtTest>

#include "allocator/config/ConfigParser.h"

using namespace allocscope::alloc;

Q_DECLARE_METATYPE(allocscope::alloc::Verdict)

namespace {

const char* kIndexAssert =
    "i < config_.size() INTERNAL ASSERT FAILED at \"/pytorch/c10/core/AllocatorConfig.h\":124, please report a bug to "
    "PyTorch. Index out of bounds in ConfigTokenizer";
const char* kAbortPrefix = "terminate called after throwing an instance of 'c10::Error'\n  what():  ";

QString abortMessage() { return QString::fromUtf8(kAbortPrefix) + QString::fromUtf8(kIndexAssert); }

}  // namespace

class TestConfigVerdicts : public QObject {
    Q_OBJECT

private slots:
    void verdict_data() {
        QTest::addColumn<QString>("input");
        QTest::addColumn<Verdict>("verdict");
        QTest::addColumn<QString>("message");    // PyTorch's exact text ("" when accepted)
        QTest::addColumn<QString>("canonical");  // formatConfig of the result (accepted only)

        const Verdict ok = Verdict::Accepted;
        const Verdict ve = Verdict::ValueErrorAtInit;
        const Verdict re = Verdict::RuntimeErrorAtInit;
        const Verdict ab = Verdict::AbortAtImport;

        // ---- accepted (§17 observation log, §10.2 grammar) ----
        QTest::newRow("empty") << "" << ok << "" << "";
        QTest::newRow("only whitespace") << "  \t " << ok << "" << "";
        QTest::newRow("max_split 20 is the minimum") << "max_split_size_mb:20" << ok << "" << "max_split_size_mb:20";
        QTest::newRow("whitespace everywhere") << " max_split_size_mb : 1 28 ,\texpandable_segments : True\n" << ok
                                               << "" << "max_split_size_mb:128,expandable_segments:True";
        QTest::newRow("trailing comma") << "expandable_segments:True," << ok << "" << "expandable_segments:True";
        QTest::newRow("comma where colon belongs") << "max_split_size_mb,128" << ok << "" << "max_split_size_mb:128";
        QTest::newRow("colon where comma belongs") << "max_split_size_mb:128:expandable_segments:True" << ok << ""
                                                   << "max_split_size_mb:128,expandable_segments:True";
        QTest::newRow("negative wraps and is clamped") << "max_split_size_mb:-5" << ok << ""
                                                       << "max_split_size_mb:17592186044415";
        QTest::newRow("trailing junk ignored") << "max_split_size_mb:128MB" << ok << "" << "max_split_size_mb:128";
        QTest::newRow("plus sign") << "max_split_size_mb:+64" << ok << "" << "max_split_size_mb:64";
        QTest::newRow("huge clamped") << "max_split_size_mb:18446744073709551615" << ok << ""
                                      << "max_split_size_mb:17592186044415";
        QTest::newRow("fraction 0.5") << "per_process_memory_fraction:0.5" << ok << "" << "per_process_memory_fraction:0.5";
        QTest::newRow("fraction 0 allowed") << "per_process_memory_fraction:0" << ok << "" << "per_process_memory_fraction:0";
        QTest::newRow("fraction 1 allowed") << "per_process_memory_fraction:1" << ok << "" << "per_process_memory_fraction:1";
        QTest::newRow("gc 0.6") << "max_split_size_mb:128,garbage_collection_threshold:0.6" << ok << ""
                                << "max_split_size_mb:128,garbage_collection_threshold:0.6";
        QTest::newRow("gc hex float via stod") << "garbage_collection_threshold:0x0.8" << ok << ""
                                               << "garbage_collection_threshold:0.5";
        QTest::newRow("backend native") << "backend:native" << ok << "" << "";
        QTest::newRow("async + max_split (ignored, accepted)") << "backend:cudaMallocAsync,max_split_size_mb:128" << ok
                                                               << "" << "backend:cudaMallocAsync,max_split_size_mb:128";
        QTest::newRow("async + release_lock") << "backend:cudaMallocAsync,release_lock_on_cudamalloc:True" << ok << ""
                                              << "backend:cudaMallocAsync,release_lock_on_cudamalloc:True";
        QTest::newRow("large segment 40") << "large_segment_size_mb:40" << ok << "" << "large_segment_size_mb:40";
        QTest::newRow("large 40, max_split 40") << "max_split_size_mb:40,large_segment_size_mb:40" << ok << ""
                                                << "large_segment_size_mb:40,max_split_size_mb:40";
        QTest::newRow("large 11 is the minimum") << "large_segment_size_mb:11" << ok << "" << "large_segment_size_mb:11";
        QTest::newRow("non-split rounding 20") << "max_non_split_rounding_mb:20" << ok << "" << "";
        QTest::newRow("non-split rounding 64") << "max_non_split_rounding_mb:64" << ok << "" << "max_non_split_rounding_mb:64";
        QTest::newRow("roundup single 4") << "roundup_power2_divisions:4" << ok << "" << "roundup_power2_divisions:4";
        QTest::newRow("roundup list") << "roundup_power2_divisions:[256:1,512:2,1024:4,>:8]" << ok << ""
                                      << "roundup_power2_divisions:[256:1,512:2,1024:4,>:8]";
        QTest::newRow("roundup list, comma for colon") << "roundup_power2_divisions:[256,1]" << ok << ""
                                                       << "roundup_power2_divisions:[256:1,>:0]";
        QTest::newRow("all booleans") << "expandable_segments:True,release_lock_on_cudamalloc:True,"
                                         "graph_capture_record_stream_reuse:True,pinned_use_cuda_host_register:True,"
                                         "pinned_use_background_threads:True"
                                      << ok << ""
                                      << "expandable_segments:True,release_lock_on_cudamalloc:True,"
                                         "graph_capture_record_stream_reuse:True,pinned_use_cuda_host_register:True,"
                                         "pinned_use_background_threads:True";
        QTest::newRow("False values are defaults") << "expandable_segments:False,release_lock_on_cudamalloc:False" << ok
                                                   << "" << "";
        QTest::newRow("pinned counts") << "pinned_num_register_threads:128,pinned_reserve_segment_size_mb:64" << ok << ""
                                       << "pinned_num_register_threads:128,pinned_reserve_segment_size_mb:64";
        QTest::newRow("ROCm alias release_lock_on_hipmalloc") << "release_lock_on_hipmalloc:True" << ok << ""
                                                              << "release_lock_on_cudamalloc:True";
        QTest::newRow("ROCm alias pinned_use_hip_host_register") << "pinned_use_hip_host_register:True" << ok << ""
                                                                 << "pinned_use_cuda_host_register:True";
        QTest::newRow("duplicate key, last wins") << "max_split_size_mb:128,max_split_size_mb:256" << ok << ""
                                                  << "max_split_size_mb:256";

        // ---- ValueError at CUDA init ----
        QTest::newRow("max_split 19") << "max_split_size_mb:19" << ve
                                      << "CachingAllocator option max_split_size_mb too small, must be >= 20" << "";
        QTest::newRow("unknown foo") << "foo:1" << ve << "Unrecognized key 'foo' in CUDA allocator config." << "";
        QTest::newRow("lowercase bool") << "expandable_segments:true" << ve
                                        << "Expected 'True' or 'False' at index 2 in ConfigTokenizer but got 'true'" << "";
        QTest::newRow("bool index counts tokens") << "max_split_size_mb:128,expandable_segments:1" << ve
                                                  << "Expected 'True' or 'False' at index 6 in ConfigTokenizer but got '1'"
                                                  << "";
        QTest::newRow("keys are case-sensitive") << "Expandable_Segments:True" << ve
                                                 << "Unrecognized key 'Expandable_Segments' in CUDA allocator config."
                                                 << "";
        QTest::newRow("roundup 3") << "roundup_power2_divisions:3" << ve << "For roundups, the divisions has to be power of 2 "
                                   << "";
        QTest::newRow("roundup 0 single") << "roundup_power2_divisions:0" << ve
                                          << "For roundups, the divisions has to be power of 2 " << "";
        QTest::newRow("roundup list value 3") << "roundup_power2_divisions:[256:1,512:3]" << ve
                                              << "For roundups, the divisions has to be power of 2 or 0 to disable roundup "
                                              << "";
        QTest::newRow("roundup list key 255") << "roundup_power2_divisions:[255:1]" << ve
                                              << "For roundups, the intervals have to be power of 2 " << "";
        QTest::newRow("large 10") << "large_segment_size_mb:10" << ve
                                  << "CachingAllocator option large_segment_size_mb must be > 10 MB" << "";
        QTest::newRow("large 40 raises max_split minimum") << "large_segment_size_mb:40,max_split_size_mb:30" << ve
                                                           << "CachingAllocator option max_split_size_mb too small, must be >= 40"
                                                           << "";
        QTest::newRow("large read first even when later") << "max_split_size_mb:30,large_segment_size_mb:40" << ve
                                                          << "CachingAllocator option max_split_size_mb too small, must be >= 40"
                                                          << "";
        QTest::newRow("fraction 1.5") << "per_process_memory_fraction:1.5" << ve
                                      << "per_process_memory_fraction is invalid, set it in [0.0, 1.0]" << "";
        QTest::newRow("fraction nan") << "per_process_memory_fraction:nan" << ve
                                      << "per_process_memory_fraction is invalid, set it in [0.0, 1.0]" << "";
        QTest::newRow("throw_on_cudamalloc_oom is newer") << "throw_on_cudamalloc_oom:True" << ve
                                                          << "Unrecognized key 'throw_on_cudamalloc_oom' in CUDA allocator config."
                                                          << "";
        QTest::newRow("expandable_segments_reserve is newer") << "expandable_segments_reserve:0.5" << ve
                                                              << "Unrecognized key 'expandable_segments_reserve' in CUDA allocator config."
                                                              << "";
        for (const char* newer : {"expandable_segments_reserve_by_class:[decode:0.5]", "pinned_free_catch_all:True",
                                  "pinned_max_round_threshold_mb:64", "pinned_max_cached_size_mb:1024"}) {
            const QString key = QString(newer).section(':', 0, 0);
            QTest::newRow(qPrintable(key + " is newer")) << newer << ve
                                                         << "Unrecognized key '" + key + "' in CUDA allocator config." << "";
        }
        QTest::newRow("expandable_segments_handle_type is internal")
            << "expandable_segments_handle_type:1" << ve
            << "Unrecognized key 'expandable_segments_handle_type' in CUDA allocator config." << "";
        QTest::newRow("backend foo") << "backend:foo" << ve
                                     << "Unknown allocator backend, options are native and cudaMallocAsync" << "";
        QTest::newRow("backend hipMallocAsync on CUDA") << "backend:hipMallocAsync" << ve
                                                        << "Unknown allocator backend, options are native and cudaMallocAsync"
                                                        << "";
        QTest::newRow("register threads 3") << "pinned_num_register_threads:3" << ve
                                            << "Number of register threads has to be power of 2, got 3" << "";
        QTest::newRow("register threads 256") << "pinned_num_register_threads:256" << ve
                                              << "Number of register threads should be less than or equal to 128, got 256"
                                              << "";
        QTest::newRow("non-split 10") << "max_non_split_rounding_mb:10" << ve
                                      << "CachingAllocator option max_non_split_rounding_mb too small, must be >= 20" << "";
        QTest::newRow("garbage_interval alone (§16c)") << "garbage_interval:5" << ve
                                                       << "Unrecognized key 'garbage_interval' in CUDA allocator config."
                                                       << "";
        QTest::newRow("max_split_size without _mb") << "max_split_size:128" << ve
                                                    << "Unrecognized key 'max_split_size' in CUDA allocator config." << "";
        QTest::newRow("gc 1.0 (open interval)") << "garbage_collection_threshold:1.0" << ve
                                                << "garbage_collect_threshold is invalid, set it in (0.0, 1.0)" << "";
        QTest::newRow("gc 0") << "garbage_collection_threshold:0" << ve
                              << "garbage_collect_threshold is invalid, set it in (0.0, 1.0)" << "";
        QTest::newRow("pinned reserve 0") << "pinned_reserve_segment_size_mb:0" << ve
                                          << "Pinned reserve segment size has to be greater than 0" << "";
        QTest::newRow("doubled comma is a key ','") << "expandable_segments:True,,max_split_size_mb:128" << ve
                                                    << "Unrecognized key ',' in CUDA allocator config." << "";
        QTest::newRow("CUDA parser runs before the common parser") << "max_split_size_mb:5,foo:1" << ve
                                                                   << "Unrecognized key 'foo' in CUDA allocator config."
                                                                   << "";

        // ---- RuntimeError at CUDA init ----
        QTest::newRow("stoull") << "max_split_size_mb:abc" << re << "stoull" << "";
        QTest::newRow("stoull out of range") << "max_split_size_mb:99999999999999999999999" << re << "stoull" << "";
        QTest::newRow("stod") << "garbage_collection_threshold:abc" << re << "stod" << "";
        QTest::newRow("stod underflow") << "garbage_collection_threshold:1e-400" << re << "stod" << "";
        QTest::newRow("stoull on a list key") << "roundup_power2_divisions:[x:1]" << re << "stoull" << "";
        QTest::newRow("backend differs from load time")
            << "backend:native,backend:cudaMallocAsync" << re
            << "tokenizer[i] == get()->name() INTERNAL ASSERT FAILED at \"/pytorch/c10/cuda/CUDAAllocatorConfig.cpp\":44, please "
               "report a bug to PyTorch. Allocator backend parsed at runtime != allocator backend parsed at load time, "
               "cudaMallocAsync != native"
            << "";
        QTest::newRow("past the end after backend") << "backend:native,max_split_size_mb" << re << kIndexAssert << "";

        // ---- abort at `import torch` (§10.2, §16c, §17) ----
        QTest::newRow("equals") << "max_split_size_mb=128" << ab << abortMessage() << "";
        QTest::newRow("equals with spaces") << "max_split_size_mb = 128" << ab << abortMessage() << "";
        QTest::newRow("colon, no value") << "max_split_size_mb:" << ab << abortMessage() << "";
        QTest::newRow("last key without value") << "max_split_size_mb:128,expandable_segments" << ab << abortMessage() << "";
        QTest::newRow("semicolon (§16c)") << "max_split_size_mb:128;garbage_interval:5" << ab << abortMessage() << "";
        QTest::newRow("a lone key") << "expandable_segments" << ab << abortMessage() << "";
        QTest::newRow("a lone comma") << "," << ab << abortMessage() << "";
        QTest::newRow("missing bracket")
            << "roundup_power2_divisions:[256:1,512:2" << ab
            << QString::fromUtf8(kAbortPrefix) +
                   "i < config_.size() INTERNAL ASSERT FAILED at \"/pytorch/c10/core/AllocatorConfig.h\":115, please report a "
                   "bug to PyTorch. Expected closing bracket ']' in ConfigTokenizer but reached end of config"
            << "";
        QTest::newRow("unknown key without value aborts first") << "foo" << ab << abortMessage() << "";
        QTest::newRow("operator[] past the end is line 55")
            << "backend:" << ab
            << QString::fromUtf8(kAbortPrefix) +
                   "i < config_.size() INTERNAL ASSERT FAILED at \"/pytorch/c10/core/AllocatorConfig.h\":55, please "
                   "report a bug to PyTorch. Index out of bounds in ConfigTokenizer"
            << "";
        QTest::newRow("list parser's operator[] at init")
            << "roundup_power2_divisions:[256]1" << re
            << "i < config_.size() INTERNAL ASSERT FAILED at \"/pytorch/c10/core/AllocatorConfig.h\":55, please report a "
               "bug to PyTorch. Index out of bounds in ConfigTokenizer"
            << "";

        // ---- under backend:cudaMallocAsync nothing is read at CUDA init (observed on 2.11) ----
        const Verdict vl = Verdict::ValueErrorOnFirstUse;
        const Verdict rl = Verdict::RuntimeErrorOnFirstUse;
        QTest::newRow("async: unknown key, common parser's message")
            << "backend:cudaMallocAsync,foo:1" << vl << "Unrecognized key 'foo' in Accelerator allocator config." << "";
        QTest::newRow("async: key before backend") << "foo:1,backend:cudaMallocAsync" << vl
                                                   << "Unrecognized key 'foo' in Accelerator allocator config." << "";
        QTest::newRow("async: too small") << "backend:cudaMallocAsync,max_split_size_mb:5" << vl
                                          << "CachingAllocator option max_split_size_mb too small, must be >= 20" << "";
        QTest::newRow("async: CUDA-level value") << "backend:cudaMallocAsync,per_process_memory_fraction:2" << vl
                                                 << "per_process_memory_fraction is invalid, set it in [0.0, 1.0]" << "";
        QTest::newRow("async: stoull") << "backend:cudaMallocAsync,max_split_size_mb:abc" << rl << "stoull" << "";
        QTest::newRow("async: past the end") << "backend:cudaMallocAsync,max_split_size_mb" << rl << kIndexAssert << "";
        QTest::newRow("async: fine") << "backend:cudaMallocAsync,per_process_memory_fraction:0.5" << ok << ""
                                     << "backend:cudaMallocAsync,per_process_memory_fraction:0.5";
    }

    void verdict() {
        QFETCH(QString, input);
        QFETCH(Verdict, verdict);
        QFETCH(QString, message);
        QFETCH(QString, canonical);
        const ParseResult r = parseConfig(input.toStdString());
        QCOMPARE(QString::fromUtf8(verdictName(r.verdict)), QString::fromUtf8(verdictName(verdict)));
        QCOMPARE(QString::fromStdString(r.pytorchMessage), message);
        QCOMPARE(r.accepted(), verdict == Verdict::Accepted);
        if (r.accepted()) {
            QCOMPARE(QString::fromStdString(formatConfig(r.config)), canonical);
            QVERIFY(!r.hasErrors());
        } else {
            QVERIFY2(r.hasErrors(), "a rejected string must come with at least one error diagnostic");
        }
    }

    // The values behind the canonical strings above, for the cases where the text hides them.
    void parsedValues() {
        QCOMPARE(parseConfig("max_split_size_mb,128").config.maxSplitSize, 128 * kMiB);
        QCOMPARE(parseConfig("max_split_size_mb:-5").config.maxSplitSize, (kUnlimited / kMiB) * kMiB);
        QCOMPARE(parseConfig("per_process_memory_fraction:0.5").config.perProcessMemoryFraction.value_or(-1), 0.5);
        QCOMPARE(parseConfig("backend:cudaMallocAsync").config.backend, Backend::CudaMallocAsync);
        const AllocatorConfig large = parseConfig("large_segment_size_mb:40").config;
        QCOMPARE(large.largeSegmentSize, 40 * kMiB);
        QCOMPARE(large.maxNonSplitRounding, 40 * kMiB);  // its default follows the large segment size
        QCOMPARE(parseConfig("garbage_collection_threshold:0.6").config.garbageCollectionThreshold, 0.6);
        QCOMPARE(parseConfig("pinned_num_register_threads:8").config.pinnedNumRegisterThreads, std::uint64_t{8});
    }

    // Every parse starts from PyTorch's defaults; nothing leaks from one parse into the next.
    void reparseStartsFromDefaults() {
        const AllocatorConfig defaults;
        QVERIFY(parseConfig("").config == defaults);
        QCOMPARE(defaults.maxSplitSize, kUnlimited);
        QCOMPARE(defaults.maxNonSplitRounding, 20 * kMiB);
        QCOMPARE(defaults.largeSegmentSize, 20 * kMiB);
        QCOMPARE(defaults.garbageCollectionThreshold, 0.0);
        QVERIFY(!parseConfig("max_split_size_mb:128,expandable_segments:True,large_segment_size_mb:40").config.operator==(defaults));
        QVERIFY(parseConfig("").config == defaults);
        QVERIFY(parseConfig("max_split_size_mb:128").config.largeSegmentSize == 20 * kMiB);
    }

    // torch._C._accelerator_setAllocatorSettings at run time (§10.3): what resets, what is kept,
    // and the setter's own messages.
    void reparse_data() {
        QTest::addColumn<QString>("current");  // the environment string the process started with
        QTest::addColumn<QString>("input");
        QTest::addColumn<Verdict>("verdict");
        QTest::addColumn<QString>("message");
        QTest::addColumn<QString>("canonical");  // the whole config in force afterwards
        const QString rich = "max_split_size_mb:128,expandable_segments:True,release_lock_on_cudamalloc:True,"
                             "garbage_collection_threshold:0.6,roundup_power2_divisions:4,large_segment_size_mb:40,"
                             "per_process_memory_fraction:0.5,pinned_use_background_threads:True";
        const Verdict ok = Verdict::Accepted;
        const Verdict ve = Verdict::ValueErrorAtInit;
        const Verdict re = Verdict::RuntimeErrorAtInit;
        QTest::newRow("empty resets the common trio, keeps the rest")
            << rich << "" << ok << ""
            << "large_segment_size_mb:40,expandable_segments:True,release_lock_on_cudamalloc:True,"
               "per_process_memory_fraction:0.5,pinned_use_background_threads:True";
        QTest::newRow("options given replace")
            << rich << "expandable_segments:False,max_split_size_mb:64" << ok << ""
            << "large_segment_size_mb:40,max_split_size_mb:64,release_lock_on_cudamalloc:True,"
               "per_process_memory_fraction:0.5,pinned_use_background_threads:True";
        QTest::newRow("kept large segment size still bounds max_split")
            << rich << "max_split_size_mb:30" << ve << "CachingAllocator option max_split_size_mb too small, must be >= 40"
            << "";
        QTest::newRow("unknown key: the common parser's message") << "" << "foo:1" << ve
                                                                  << "Unrecognized key 'foo' in Accelerator allocator config."
                                                                  << "";
        QTest::newRow("common parser runs first at run time") << "" << "max_split_size_mb:5,foo:1" << ve
                                                              << "CachingAllocator option max_split_size_mb too small, must be >= 20"
                                                              << "";
        QTest::newRow("no abort at run time") << "" << "max_split_size_mb:" << re << kIndexAssert << "";
        QTest::newRow("'=' at run time: an unknown key")
            << "" << "max_split_size_mb=128" << ve
            << "Unrecognized key 'max_split_size_mb=128' in Accelerator allocator config." << "";
        QTest::newRow("backend cannot change")
            << "" << "backend:cudaMallocAsync" << re
            << "tokenizer[i] == get()->name() INTERNAL ASSERT FAILED at \"/pytorch/c10/cuda/CUDAAllocatorConfig.cpp\":44, please "
               "report a bug to PyTorch. Allocator backend parsed at runtime != allocator backend parsed at load time, "
               "cudaMallocAsync != native"
            << "";
        QTest::newRow("backend cannot change back")
            << "backend:cudaMallocAsync" << "backend:native" << re
            << "tokenizer[i] == get()->name() INTERNAL ASSERT FAILED at \"/pytorch/c10/cuda/CUDAAllocatorConfig.cpp\":44, please "
               "report a bug to PyTorch. Allocator backend parsed at runtime != allocator backend parsed at load time, "
               "native != cudaMallocAsync"
            << "";
        QTest::newRow("same backend is fine") << "backend:cudaMallocAsync" << "backend:cudaMallocAsync" << ok << ""
                                              << "backend:cudaMallocAsync";
    }

    void reparse() {
        QFETCH(QString, current);
        QFETCH(QString, input);
        QFETCH(Verdict, verdict);
        QFETCH(QString, message);
        QFETCH(QString, canonical);
        const ParseResult start = parseConfig(current.toStdString());
        QVERIFY(start.accepted());
        const ParseResult r = reparseConfig(input.toStdString(), start.config);
        QCOMPARE(QString::fromUtf8(verdictName(r.verdict)), QString::fromUtf8(verdictName(verdict)));
        QCOMPARE(QString::fromStdString(r.pytorchMessage), message);
        QCOMPARE(r.hasErrors(), !r.accepted());
        if (r.accepted()) QCOMPARE(QString::fromStdString(formatConfig(r.config)), canonical);
    }

    // After a re-parse, max_non_split_rounding follows the (kept) large segment size again.
    void reparseNonSplitFollowsLargeSegment() {
        const ParseResult start = parseConfig("large_segment_size_mb:40,max_non_split_rounding_mb:100");
        QCOMPARE(start.config.maxNonSplitRounding, 100 * kMiB);
        const ParseResult r = reparseConfig("expandable_segments:True", start.config);
        QCOMPARE(r.config.maxNonSplitRounding, 40 * kMiB);
        QCOMPARE(r.config.largeSegmentSize, 40 * kMiB);
    }

    // A rejected string keeps what was read before the failure, on top of the defaults.
    void rejectedKeepsPartialConfig() {
        const ParseResult r = parseConfig("expandable_segments:True,max_split_size_mb:5");
        QCOMPARE(r.verdict, Verdict::ValueErrorAtInit);
        QVERIFY(r.config.expandableSegments);
        QCOMPARE(r.config.maxSplitSize, kUnlimited);
    }

    // The settings of every real PyTorch 2.11 run in tests/data/traces: accepted, and the parsed
    // max_split_size is what PyTorch reported in memory_stats() (-1 = unlimited; the async backend
    // reports 0 because it never reads the option).
    void recordedTraceSettings() {
        const QDir dir(QString::fromUtf8(qgetenv("ALLOCSCOPE_TEST_DATA")) + "/traces");
        const QStringList files = dir.entryList({"*.json"}, QDir::Files);
        QVERIFY2(files.size() >= 10, qPrintable(dir.path()));
        for (const QString& name : files) {
            QFile file(dir.filePath(name));
            QVERIFY(file.open(QIODevice::ReadOnly));
            const QJsonObject o = QJsonDocument::fromJson(file.readAll()).object();
            const std::string settings = o["PYTORCH_CUDA_ALLOC_CONF"].toString().toStdString();
            const ParseResult r = parseConfig(settings);
            QVERIFY2(r.accepted(), qPrintable(name));
            QVERIFY2(formatConfig(r.config) == settings || parseConfig(formatConfig(r.config)).config == r.config,
                     qPrintable(name));
            const qint64 reported = o["memory_stats"].toObject()["max_split_size"].toInteger(-2);
            if (r.config.backend == Backend::CudaMallocAsync) {
                QCOMPARE(reported, qint64{0});
            } else if (r.config.maxSplitSize == kUnlimited) {
                QCOMPARE(reported, qint64{-1});
            } else {
                QCOMPARE(reported, static_cast<qint64>(r.config.maxSplitSize));
            }
        }
    }

    // Bytes that are not ASCII whitespace stay in tokens; nothing crashes on odd input.
    void oddBytes() {
        const std::string nbsp = "max_split_size_mb:\xC2\xA0" "128";
        QCOMPARE(parseConfig(nbsp).verdict, Verdict::RuntimeErrorAtInit);  // stoull("\xC2\xA0" "128") throws
        std::string withNul("max_split_size_mb:128", 21);
        withNul += '\0';
        withNul += ",x";
        const ParseResult r = parseConfig(withNul);
        QVERIFY(!r.accepted());
        QCOMPARE(parseConfig(std::string(10000, ',')).verdict, Verdict::ValueErrorAtInit);
        QCOMPARE(parseConfig(std::string(10000, '[')).verdict, Verdict::AbortAtImport);
        QCOMPARE(parseConfig("roundup_power2_divisions:" + std::string(5000, '[')).verdict, Verdict::AbortAtImport);
    }
};

QTEST_GUILESS_MAIN(TestConfigVerdicts)
#include "TestConfigVerdicts.moc"
