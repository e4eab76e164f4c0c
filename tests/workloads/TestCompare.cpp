// Workload behaviour under the allocator, the comparison engine over every workload and the five
// configs, fragmentation metrics, the cost model and `recommend`.
#include <QtTest>

#include "WorkloadTestUtil.h"
#include "allocator/compare/Recommender.h"
#include "allocator/device/GpuPresets.h"

using namespace allocscope::alloc;

namespace {
CompareDevice preset(const std::string& name) {
    const GpuPreset p = *findGpuPreset(name);
    CompareDevice d;
    d.name = p.name;
    d.totalMemory = p.totalMemory;
    d.otherMemory = p.contextMemory;
    return d;
}
const std::vector<std::string> kFiveConfigs = {"", "expandable_segments:True", "max_split_size_mb:128",
                                               "garbage_collection_threshold:0.6,max_split_size_mb:256",
                                               "backend:cudaMallocAsync"};
}  // namespace

class TestCompare : public QObject {
    Q_OBJECT
private slots:
    void oomWithFreeMemoryOomsUnderDefaultNotUnderExpandable() {
        const GeneratedProgram g = wltest::generate("oom-with-free-memory");
        const auto runs = ComparisonEngine::compare(g.program, {wltest::config(""), wltest::config("expandable_segments:True")},
                                                    preset("24gb"));
        QCOMPARE(runs[0].ooms.size(), std::size_t(1));
        QCOMPARE(runs[0].ooms[0].opIndex, std::uint64_t(g.program.ops.size() - 2));  // the request (before its phase end)
        const QString msg = QString::fromStdString(runs[0].ooms[0].message);
        QVERIFY2(msg.startsWith("CUDA out of memory. Tried to allocate 256.00 MiB. GPU 0 has a total capacity of 23.65 GiB"),
                 qPrintable(msg));
        QVERIFY2(msg.contains(QRegularExpression(R"(and [0-9.]+ GiB is reserved by PyTorch but unallocated\.)")), qPrintable(msg));
        QVERIFY(msg.contains("expandable_segments:True to avoid fragmentation"));
        QVERIFY(runs[0].retries >= 1);  // the release-and-retry ran and released nothing
        QCOMPARE(runs[0].cudaFrees, std::uint64_t(0));
        // Reserved but unallocated at the OOM: the 180 MiB holes, gigabytes of them.
        QVERIFY(runs[0].finalReserved - runs[0].finalAllocated > 6ull * 1024 * kMiB);
        QVERIFY(runs[1].ooms.empty());
        QVERIFY(runs[1].unmaps > 0);  // the retry unmapped the holes' pages
    }

    void multiModelSharingCollectsGarbageOnlyUnderAFraction() {
        const auto gc = wltest::config("garbage_collection_threshold:0.6");
        const GeneratedProgram capped = wltest::generate("multi-model-sharing");
        const GeneratedProgram uncapped = wltest::generate("multi-model-sharing", {{"fraction", "1"}});
        const RunMetrics withCap = ComparisonEngine::runOne(capped.program, gc, wltest::h100());
        const RunMetrics noCap = ComparisonEngine::runOne(uncapped.program, gc, wltest::h100());
        const RunMetrics capNoGc = ComparisonEngine::runOne(capped.program, wltest::config(""), wltest::h100());
        QVERIFY(withCap.gcReleases > 0);
        QCOMPARE(noCap.gcReleases, std::uint64_t(0));
        QCOMPARE(capNoGc.gcReleases, std::uint64_t(0));
        QVERIFY(capNoGc.retries > withCap.retries);  // without GC the cap is hit and everything is flushed
        QVERIFY(withCap.ooms.empty() && noCap.ooms.empty());
    }

    void growingKvCachesStrandMemoryThatExpandableSegmentsReturn() {
        const GeneratedProgram g = wltest::generate("llm-inference-varlen", {{"requests", "6"}});
        const auto runs = ComparisonEngine::compare(g.program, {wltest::config(""), wltest::config("expandable_segments:True")},
                                                    wltest::h100());
        // Every reallocated cache leaves its old block behind; under the default config most of
        // it cannot be reused by the next, larger size.
        QVERIFY(runs[0].peakReserved > 2 * runs[1].peakReserved);
        QVERIFY(runs[0].peakAllocated < runs[0].peakReserved / 2);
        std::size_t phases = 0;
        for (const std::string& label : g.program.labels) phases += label == "prefill" || label == "decode";
        QCOMPARE(phases, std::size_t(2));
    }

    void modelLoadLeavesStagingMemoryCached() {
        const std::vector<std::pair<std::string, std::string>> small = {{"billions", "1"}, {"layers", "8"}};
        auto withCache = small;
        withCache.emplace_back("empty_cache", "true");
        const RunMetrics kept = ComparisonEngine::runOne(wltest::generate("model-load", small).program, wltest::config(""), wltest::h100());
        const RunMetrics emptied = ComparisonEngine::runOne(wltest::generate("model-load", withCache).program, wltest::config(""), wltest::h100());
        // fp16 weights stay (about 2 GB for 1B parameters); the fp32 staging blocks stay cached.
        QVERIFY(kept.finalAllocated > 1'800'000'000ull && kept.finalAllocated < 2'400'000'000ull);
        QVERIFY(kept.finalReserved > kept.finalAllocated);
        QCOMPARE(emptied.finalAllocated, kept.finalAllocated);
        QVERIFY(emptied.finalReserved < kept.finalReserved);
        QVERIFY(kept.peakAllocated > kept.finalAllocated);  // a staging tensor on top of the weights
    }

    void compareRunsEveryWorkloadUnderTheFiveConfigs() {
        std::vector<CompareConfig> configs;
        for (const std::string& c : kFiveConfigs) configs.push_back(wltest::config(c));
        for (const auto& w : WorkloadRegistry::instance().all()) {
            std::vector<std::pair<std::string, std::string>> params;
            if (w->name() == "random-mix") params = {{"events", "20000"}};
            if (w->name() == "llm-inference-varlen") params = {{"requests", "4"}};
            const GeneratedProgram g = w->generate(w->resolve(params), 1);
            CompareDevice device = preset(w->defaultGpu());
            CompareOptions options;
            options.threads = 2;
            options.timelinePoints = 64;
            const auto runs = ComparisonEngine::compare(g.program, configs, device, options);
            QCOMPARE(runs.size(), configs.size());
            for (const RunMetrics& r : runs) {
                const QString where = QString::fromStdString(w->name() + " / " + r.label);
                QVERIFY2(!r.error, qPrintable(where));
                QCOMPARE(r.ops, static_cast<std::uint64_t>(g.program.ops.size()));
                QVERIFY2(r.peakAllocated > 0, qPrintable(where));
                QVERIFY2(r.peakReserved >= r.peakAllocated || r.asyncBackend, qPrintable(where));
                QVERIFY2(r.peakReserved <= device.totalMemory, qPrintable(where));
                QVERIFY2(r.finalReserved <= r.peakReserved && r.finalAllocated <= r.peakAllocated, qPrintable(where));
                QVERIFY2(r.allocatorUs > 0.0, qPrintable(where));
                QVERIFY2(!r.timeline.empty() && r.timeline.back().opIndex + 1 == g.program.ops.size(), qPrintable(where));
                if (r.asyncBackend) {
                    QCOMPARE(r.stats.max_split_size, std::int64_t(0));
                    QCOMPARE(r.cudaMallocs + r.maps, std::uint64_t(0));
                    continue;
                }
                QVERIFY2(r.cudaMallocs + r.maps > 0, qPrintable(where));
                QVERIFY2(r.events >= r.allocFreeOps, qPrintable(where));
                QVERIFY2(r.atPeak && r.atEnd, qPrintable(where));
                QCOMPARE(r.atPeak->reserved, r.peakReserved);  // the snapshot was taken at the peak
                QVERIFY2(r.atPeak->strandedFree <= r.atPeak->totalFree, qPrintable(where));
                QVERIFY2(r.atPeak->fragmentation >= 0.0 && r.atPeak->fragmentation < 1.0, qPrintable(where));
                QCOMPARE(r.atEnd->reserved, r.finalReserved);
                const bool oomExpected = w->name() == "oom-with-free-memory" && r.label == "default";
                QVERIFY2(r.oom() == oomExpected, qPrintable(where));
            }
        }
    }

    void fragmentationMetricsOfFrag101AtItsPeak() {
        const GeneratedProgram g = wltest::generate("fragmentation-101");
        const RunMetrics r = ComparisonEngine::runOne(g.program, wltest::config(""), wltest::h100());
        // At the 200 MB request: fifty 10,000,384-byte holes in fifty 20 MiB segments (each next
        // to a live tensor), the small segment's free rest, the 192 MiB segment's split-off tail.
        QCOMPARE(r.peakReserved, std::uint64_t(1194) * kMiB);
        QCOMPARE(r.atPeak->strandedFree, 50ull * 10'000'384ull + (2 * kMiB - 806'912ull) + (192 * kMiB - 200'000'000ull));
        QVERIFY(r.atPeak->fragmentation > 0.9);
        QCOMPARE(r.cudaMallocs, std::uint64_t(53));
        QCOMPARE(r.cudaFrees, std::uint64_t(51));
        const CostModel cost;
        QCOMPARE(r.allocatorUs, cost.nativeUs(r.allocFreeOps, false, 53, 51, 0, 0));
        QVERIFY(r.allocatorUs > 104 * 38.0);
    }

    void recommendPicksTheSimplestConfigNearTheLowestPeak() {
        const GeneratedProgram g = wltest::generate("fragmentation-101");
        RecommendOptions o;
        o.gpuGranularity = 1024 * kMiB;
        const Recommendation rec = Recommender::recommend(g.program, wltest::h100(), o);
        QVERIFY(rec.chosen.has_value());
        const auto& best = rec.candidates[*rec.chosen];
        QVERIFY(!best.metrics.asyncBackend);  // the async model is shown, not recommended
        QVERIFY(best.metrics.peakReserved <= rec.lowestPeakReserved * 1.01);
        // frag101: expandable segments reserve the least (1162 MiB, one option).
        QCOMPARE(best.config.label, std::string("expandable_segments:True"));
        QCOMPARE(best.metrics.peakReserved, std::uint64_t(1162) * kMiB);
        for (const auto& c : rec.candidates) {
            if (c.metrics.asyncBackend) continue;
            QVERIFY(c.metrics.peakReserved >= rec.lowestPeakReserved || c.metrics.oom());
            // Nothing simpler qualifies.
            if (c.complexity < best.complexity && !c.metrics.oom()) {
                QVERIFY(c.metrics.peakReserved > rec.lowestPeakReserved * 1.01);
            }
            QVERIFY(c.minTotalMemory.has_value());
            QVERIFY(*c.minTotalMemory >= c.metrics.peakReserved);
        }
        QCOMPARE(rec.margin, static_cast<double>(best.metrics.peakReserved) / static_cast<double>(rec.lowestPeakReserved) - 1.0);
        // The oom workload on its card: default OOMs, so it cannot be recommended.
        const GeneratedProgram oom = wltest::generate("oom-with-free-memory");
        RecommendOptions fast;
        fast.searchGpuSize = false;
        const Recommendation r2 = Recommender::recommend(oom.program, preset("24gb"), fast);
        QVERIFY(r2.chosen.has_value());
        QVERIFY(r2.candidates[*r2.chosen].config.label != "default");
        QVERIFY(r2.candidates.front().metrics.oom());
    }

    void smallestGpuIsTheFittingBoundary() {
        const GeneratedProgram g = wltest::generate("fragmentation-101");
        const auto cfg = wltest::config("");
        const std::uint64_t step = 64 * kMiB;
        const auto fits = Recommender::smallestGpu(g.program, cfg, wltest::h100(), step);
        QVERIFY(fits.has_value());
        CompareDevice d = wltest::h100();
        d.totalMemory = *fits;
        QVERIFY(!ComparisonEngine::runOne(g.program, cfg, d).oom());
        d.totalMemory = *fits - step;
        QVERIFY(ComparisonEngine::runOne(g.program, cfg, d).oom());
    }
};

QTEST_GUILESS_MAIN(TestCompare)
#include "TestCompare.moc"
