// Every shipped lesson, run: its verdict is checked against the measured numbers (written out
// here in C++, independently of the lesson's own rule), and the trace lessons against PyTorch's
// recorded numbers. Then lessons with changed parameters must change their verdict: the verdict
// is computed from the runs, not stored.
#include <QtTest>
#include <map>

#include "LessonTestSupport.h"
#include "app/lessons/LessonError.h"
#include "app/lessons/LessonLibrary.h"
#include "app/lessons/LessonLoader.h"
#include "app/lessons/LessonRunner.h"

using namespace allocscope::app;
using lessontest::mib;
using lessontest::run;

class TestLessonVerdicts : public QObject {
    Q_OBJECT

    std::map<std::string, LessonResult> results_;

    const LessonResult& result(const std::string& name) {
        const auto it = results_.find(name);
        if (it == results_.end()) qFatal("lesson %s did not run", name.c_str());
        return it->second;
    }

    // Loads a shipped lesson with `from` replaced by `to` (once, must be present) and runs it.
    static LessonResult runModified(const std::string& file, const std::string& from, const std::string& to) {
        const std::string path = lessontest::lessonsDir() + "/" + file;
        std::string text = lessontest::readFile(path);
        const std::size_t at = text.find(from);
        if (at == std::string::npos) qFatal("'%s' not in %s", from.c_str(), file.c_str());
        text.replace(at, from.size(), to);
        return LessonRunner::run(LessonLoader::parse(text, path));
    }

private slots:
    void initTestCase() {
        const std::vector<Lesson> lessons = LessonLibrary::load(lessontest::lessonsDir());
        QCOMPARE(lessons.size(), std::size_t{13});
        for (std::size_t i = 0; i < lessons.size(); ++i) {
            QCOMPARE(lessons[i].number, static_cast<int>(i + 1));
            results_.emplace(lessons[i].name, LessonRunner::run(lessons[i]));
        }
    }

    void fragmentationOom() {
        const LessonResult& r = result("fragmentation-oom");
        const auto& a = run(r, "A");
        const auto& b = run(r, "B");
        QVERIFY(a.metrics.oom());
        QVERIFY(!b.metrics.oom());
        // Gigabytes cached and free, but no single free block as big as the 256 MiB request.
        QVERIFY(mib(a.metrics.atEnd->totalFree) > 1024.0);
        QCOMPARE(mib(a.metrics.atEnd->largestFree), 180.0);
        QCOMPARE(r.outcome, Outcome::False);
        // The step at the OOM points at the OOM event of the default run.
        bool found = false;
        for (const LessonStepView& s : r.steps) {
            if (s.run == 0 && s.event && *s.event == a.anchors.firstOomEvent) found = true;
        }
        QVERIFY(found);
    }

    void expandableSegmentsMatchesPyTorch() {
        const LessonResult& r = result("expandable-segments");
        const auto& a = run(r, "A");
        const auto& b = run(r, "B");
        // PyTorch 2.11 on an H100 (traces/kv_growth_limited__*.json): 4,052 -> 2,540 MiB, 5 -> 0 retries.
        QCOMPARE(mib(a.metrics.peakReserved), 4052.0);
        QCOMPARE(mib(b.metrics.peakReserved), 2540.0);
        QCOMPARE(a.metrics.retries, std::uint64_t{5});
        QCOMPARE(b.metrics.retries, std::uint64_t{0});
        QCOMPARE(a.metrics.cudaMallocs, std::uint64_t{119});
        QCOMPARE(r.outcome, Outcome::True);
    }

    void maxSplitSizeMatchesPyTorch() {
        const LessonResult& r = result("max-split-size");
        // PyTorch: train_gpt 4,678 MiB (default) -> 4,918 MiB (max_split_size_mb:128), 67 -> 81 cudaMallocs.
        QCOMPARE(mib(run(r, "A").metrics.peakReserved), 4678.0);
        QCOMPARE(mib(run(r, "B").metrics.peakReserved), 4918.0);
        QCOMPARE(run(r, "B").metrics.cudaMallocs, std::uint64_t{81});
        QCOMPARE(r.outcome, Outcome::False);
    }

    void garbageCollectionNeedsAFraction() {
        const LessonResult& r = result("garbage-collection");
        QCOMPARE(run(r, "G1").metrics.gcReleases, std::uint64_t{0});
        QCOMPARE(run(r, "G1").metrics.peakReserved, run(r, "A1").metrics.peakReserved);
        QVERIFY(run(r, "G").metrics.gcReleases > 0);
        QVERIFY(run(r, "G").metrics.peakReserved < run(r, "A").metrics.peakReserved);
        QCOMPARE(r.outcome, Outcome::False);
    }

    void emptyCacheLowersReserved() {
        const LessonResult& r = result("empty-cache");
        const auto& no = run(r, "NO");
        const auto& ec = run(r, "EC");
        QVERIFY(ec.metrics.finalReserved < no.metrics.finalReserved);
        QCOMPARE(ec.metrics.finalAllocated, no.metrics.finalAllocated);
        QVERIFY(ec.metrics.cudaMallocs > no.metrics.cudaMallocs);
        QVERIFY(ec.metrics.stats.segment[0].current > 0);  // the segment holding small tensors stays
        QCOMPARE(r.outcome, Outcome::False);
    }

    void asyncBackendIgnoresNativeOptions() {
        const LessonResult& r = result("async-backend");
        const auto base = run(r, "ASYNC").metrics.peakReserved;
        for (const char* id : {"MS", "RU", "GC", "EX"}) {
            QVERIFY(run(r, id).ran);
            QCOMPARE(run(r, id).metrics.peakReserved, base);
        }
        QCOMPARE(run(r, "MS").metrics.stats.max_split_size, std::int64_t{0});
        QCOMPARE(r.outcome, Outcome::False);
    }

    void malformedConfigIsPyTorchsVerdict() {
        const LessonResult& r = result("malformed-config");
        QCOMPARE(run(r, "W").configVerdict, std::string("abort-at-import"));
        QVERIFY(!run(r, "W").ran);
        QCOMPARE(run(r, "K").configVerdict, std::string("value-error-at-init"));
        QVERIFY(run(r, "K").pytorchMessage.find("Unrecognized key 'garbage_interval'") != std::string::npos);
        QCOMPARE(run(r, "F").configVerdict, std::string("accepted"));
        QCOMPARE(r.outcome, Outcome::False);
    }

    void roundupTradesWasteForReuse() {
        const LessonResult& r = result("roundup-power2");
        QVERIFY(run(r, "R").metrics.peakAllocated > run(r, "A").metrics.peakAllocated);
        QVERIFY(run(r, "R").metrics.peakReserved * 10 <= run(r, "A").metrics.peakReserved * 9);
        QCOMPARE(r.outcome, Outcome::False);
    }

    void trainingLevers() {
        const LessonResult& r = result("training-levers");
        const double base = static_cast<double>(run(r, "BASE").metrics.peakAllocated);
        for (const char* id : {"ACC", "BF16", "CKPT"}) QVERIFY(static_cast<double>(run(r, id).metrics.peakAllocated) <= 0.9 * base);
        QVERIFY(static_cast<double>(run(r, "SAME").metrics.peakAllocated) >= 0.95 * base);
        QCOMPARE(r.outcome, Outcome::Depends);
    }

    void memorySummary() {
        const LessonResult& r = result("memory-summary");
        const auto& a = run(r, "A");
        QVERIFY(a.metrics.peakReserved > a.metrics.peakAllocated);
        QVERIFY(a.metrics.stats.inactive_split_bytes[0].peak > 0);
        QCOMPARE(a.metrics.finalAllocated, std::uint64_t{0});
        QVERIFY(a.metrics.atEnd->releasable > 0);
        QCOMPARE(r.outcome, Outcome::False);
    }

    void memoryFraction() {
        const LessonResult& r = result("memory-fraction");
        QCOMPARE(mib(run(r, "CAP").metrics.peakReserved), 4052.0);  // PyTorch's own run
        QCOMPARE(run(r, "CAP").metrics.retries, std::uint64_t{5});
        QCOMPARE(run(r, "FREE").metrics.retries, std::uint64_t{0});
        QVERIFY(run(r, "FREE").metrics.peakReserved > run(r, "CAP").metrics.peakReserved);
        QVERIFY(run(r, "GC").metrics.gcReleases > 0);
        QCOMPARE(r.outcome, Outcome::False);
    }

    void streams() {
        const LessonResult& r = result("streams");
        QVERIFY(run(r, "SLOW").metrics.peakReserved * 10 >= run(r, "FAST").metrics.peakReserved * 11);
        QCOMPARE(r.outcome, Outcome::False);
    }

    void cudaGraphsKeepTheirPool() {
        const LessonResult& r = result("cuda-graphs");
        const auto& eager = run(r, "EAGER").metrics;
        const auto& graph = run(r, "GRAPH").metrics;
        const auto& reset = run(r, "RESET").metrics;
        // After the final empty_cache(): the kept graph's pool (210 MiB) is still reserved; without a
        // graph, or once it is reset, only the model, Adam's state (and the graph's static input) are.
        QCOMPARE(mib(eager.finalReserved), 210.0);
        QCOMPARE(mib(graph.finalReserved), 442.0);
        QCOMPARE(mib(reset.finalReserved), 232.0);
        QVERIFY(graph.finalReserved * 2 >= eager.finalReserved * 3);
        QVERIFY(reset.finalReserved * 4 <= graph.finalReserved * 3);
        // The kept pool's cached free blocks survive empty_cache().
        QVERIFY(graph.atEnd->totalFree >= eager.atEnd->totalFree + 64ull * 1024 * 1024);
        // The graph run peaks inside an eager evaluation, with free blocks cached (in the pool).
        const auto& program = run(r, "GRAPH").program;
        int depthInEval = 0;
        for (std::size_t i = 0; i <= graph.peakReservedOp && i < program.ops.size(); ++i) {
            const auto& op = program.ops[i];
            if (op.kind == allocscope::alloc::OpKind::Phase && program.labels[op.labelId] == "eager eval") {
                depthInEval += op.begin ? 1 : -1;
            }
        }
        QCOMPARE(depthInEval, 1);
        QVERIFY(graph.atPeak->totalFree >= 64ull * 1024 * 1024);
        QCOMPARE(r.outcome, Outcome::False);
    }

    void everyStepResolvesToAnEventOfItsRun() {
        for (const auto& [name, r] : results_) {
            if (r.lesson.program.kind == LessonProgram::Kind::ConfigOnly) continue;
            QCOMPARE(r.steps.size(), r.lesson.steps.size());
            for (const LessonStepView& s : r.steps) {
                const LessonRunResult& x = r.runs[s.run];
                if (x.metrics.asyncBackend) continue;
                QVERIFY2(s.event.has_value(), name.c_str());
                QVERIFY2(*s.event < x.anchors.events, name.c_str());
            }
        }
    }

    // --- the verdict is computed: change the lesson, the verdict changes ---

    void flipFragmentationBySmallerRequest() {
        // The same fill (sized for a 24 GB card) on a 40 GB card: no OOM, so the lesson cannot show one.
        const LessonResult r = runModified("01-fragmentation-oom.json", "\"gpu\": \"24gb\"", "\"gpu\": \"40gb\"");
        QVERIFY(!run(r, "A").metrics.oom());
        QCOMPARE(r.outcome, Outcome::Depends);
    }

    void flipExpandableByComparingTheSameConfig() {
        const LessonResult r = runModified("02-expandable-segments.json", "\"config\": \"expandable_segments:True\"", "\"config\": \"\"");
        QCOMPARE(run(r, "B").metrics.peakReserved, run(r, "A").metrics.peakReserved);
        QVERIFY(r.outcome != Outcome::True);
    }

    void flipGarbageCollectionWithoutAnyFraction() {
        const LessonResult r = runModified("04-garbage-collection.json", "\"program\": {\"workload\": \"multi-model-sharing\"}",
                                           "\"program\": {\"workload\": \"multi-model-sharing\", \"params\": {\"fraction\": 1.0}}");
        QCOMPARE(run(r, "G").metrics.gcReleases, std::uint64_t{0});
        QCOMPARE(r.outcome, Outcome::Depends);
    }

    void flipMalformedConfigWhenTheStringIsFixed() {
        const LessonResult r = runModified("07-malformed-config.json", "\"config\": \"max_split_size_mb:128;garbage_interval:5\"",
                                           "\"config\": \"max_split_size_mb:128\"");
        QCOMPARE(r.outcome, Outcome::True);
    }

    void flipStreamsWhenBothLagsAreEqual() {
        const LessonResult r = runModified("12-streams.json", "\"params\": {\"lag\": 20}", "\"params\": {\"lag\": 1}");
        QCOMPARE(r.outcome, Outcome::True);
    }

    void flipCudaGraphsWhenTheGraphIsResetToo() {
        // Both graph runs reset the graph before empty_cache(): nothing of the pool is left.
        const LessonResult r = runModified("13-cuda-graphs.json", "\"params\": {\"reset\": false}", "\"params\": {\"reset\": true}");
        QCOMPARE(run(r, "GRAPH").metrics.finalReserved, run(r, "RESET").metrics.finalReserved);
        QCOMPARE(r.outcome, Outcome::True);
    }

    void aRuleReadingAMissingNumberIsAnError() {
        // A rule that reads a run PyTorch refuses to start fails with what and where.
        const std::string path = lessontest::lessonsDir() + "/07-malformed-config.json";
        std::string text = lessontest::readFile(path);
        const auto replace = [&text](const std::string& from, const std::string& to) {
            QVERIFY(text.find(from) != std::string::npos);
            text.replace(text.find(from), from.size(), to);
        };
        replace("\"program\": {\"config_only\": true}", "\"program\": {\"workload\": \"fragmentation-101\"}");
        replace("configAccepted[F]\"", "configAccepted[F] and peakReserved[W] > 0\"");
        try {
            LessonRunner::run(LessonLoader::parse(text, path));
            QFAIL("expected a LessonError");
        } catch (const LessonError& e) {
            QVERIFY2(e.problem().find("run 'W' has no peak reserved: it did not run") != std::string::npos, e.what());
            QVERIFY2(e.location().find("verdict.rules[0].when") != std::string::npos, e.what());
        }
    }

    void cancelStopsBeforeTheRuns() {
        const std::vector<Lesson> lessons = LessonLibrary::load(lessontest::lessonsDir());
        std::atomic<bool> cancel{true};
        const LessonResult r = LessonRunner::run(lessons.front(), {}, &cancel);
        QVERIFY(r.cancelled);
        QVERIFY(r.runs.empty());
    }
};

QTEST_GUILESS_MAIN(TestLessonVerdicts)
#include "TestLessonVerdicts.moc"
