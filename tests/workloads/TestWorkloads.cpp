// The demo workload generators: registry, parameters, determinism, seeds, the event model, and
// that fragmentation-101 / llm-training issue exactly the shared traces' requests.
#include <QtTest>

#include <set>

#include "WorkloadTestUtil.h"
#include "allocator/core/CachingAllocator.h"
#include "allocator/core/EventSink.h"
#include "allocator/core/ProgramRunner.h"
#include "allocator/device/GpuPresets.h"
#include "allocator/device/SimulatedDevice.h"

using namespace allocscope::alloc;

namespace {

// Small parameters so every generator runs fast (also under ASan).
std::vector<std::pair<std::string, std::string>> smallParams(const std::string& name) {
    if (name == "llm-training") return {{"layers", "2"}, {"steps", "2"}, {"vocab", "1000"}, {"batch", "2"}, {"seq_len", "64"}};
    if (name == "llm-inference-varlen") return {{"requests", "4"}, {"layers", "2"}, {"max_new_tokens", "40"}};
    if (name == "random-mix") return {{"events", "5000"}};
    if (name == "multi-stream") return {{"iterations", "30"}};
    if (name == "model-load") return {{"billions", "0.5"}, {"layers", "4"}};
    return {};
}

// (kind, id, size, stream) of every op that carries them, as one comparable vector.
std::vector<std::tuple<int, std::uint64_t, std::uint64_t, std::uint64_t, double, std::uint32_t>> key(const Program& p) {
    std::vector<std::tuple<int, std::uint64_t, std::uint64_t, std::uint64_t, double, std::uint32_t>> out;
    for (const Op& op : p.ops) {
        out.emplace_back(static_cast<int>(op.kind), op.id, op.size, op.stream, op.fraction, op.labelId);
    }
    return out;
}

// Alloc sizes in order, and each Free as the ordinal of the alloc it frees.
std::vector<std::int64_t> requestSequence(const Program& p) {
    std::map<std::uint64_t, std::int64_t> ordinal;
    std::int64_t n = 0;
    std::vector<std::int64_t> out;
    for (const Op& op : p.ops) {
        if (op.kind == OpKind::Alloc) {
            ordinal[op.id] = n++;
            out.push_back(static_cast<std::int64_t>(op.size));
        } else if (op.kind == OpKind::Free) {
            out.push_back(-1 - ordinal.at(op.id));
        }
    }
    return out;
}

}  // namespace

class TestWorkloads : public QObject {
    Q_OBJECT
private slots:
    void registryListsNineDescribedWorkloads() {
        const auto& all = WorkloadRegistry::instance().all();
        QVERIFY(all.size() >= 9);
        for (const char* name : {"fragmentation-101", "oom-with-free-memory", "llm-training", "llm-inference-varlen",
                                 "model-load", "multi-model-sharing", "multi-stream", "random-mix", "cuda-graphs"}) {
            const Workload* w = WorkloadRegistry::instance().find(name);
            QVERIFY2(w != nullptr, name);
            QVERIFY(w->description().size() > 200);
            QVERIFY(findGpuPreset(w->defaultGpu()).has_value());
            for (const ParamSpec& p : w->params()) {
                QVERIFY2(!p.help.empty(), p.name.c_str());
                parseParamValue(p, p.defaultValue);  // every default is valid
            }
        }
        QCOMPARE(QString::fromStdString(WorkloadRegistry::instance().get("oom-with-free-memory").defaultGpu()),
                 QString("24gb"));
    }

    void badParametersSayWhatAndWhere() {
        const Workload& w = WorkloadRegistry::instance().get("fragmentation-101");
        auto expectError = [&](const std::string& name, const std::string& value, const QString& fragment) {
            try {
                w.resolve({{name, value}});
                QFAIL("no error");
            } catch (const WorkloadError& e) {
                QVERIFY2(QString(e.what()).contains(fragment), e.what());
                QCOMPARE(QString::fromStdString(e.where()), QString::fromStdString(name + "=" + value));
            }
        };
        expectError("tensors", "abc", "expects an integer");
        expectError("tensors", "0", "between 1 and");
        expectError("tensorz", "5", "did you mean 'tensors'");
        expectError("empty_cache", "maybe", "true or false");
        QVERIFY_THROWS_EXCEPTION(WorkloadError, WorkloadRegistry::instance().get("no-such-workload"));
        QVERIFY_THROWS_EXCEPTION(WorkloadError, WorkloadParams::splitAssignment("novalue"));
        const Workload& llm = WorkloadRegistry::instance().get("llm-training");
        QVERIFY_THROWS_EXCEPTION(WorkloadError, llm.generate(llm.resolve({{"d_model", "100"}, {"heads", "12"}}), 1));
    }

    void fragmentation101IssuesTheTracesRequests() {
        const GeneratedProgram g = wltest::generate("fragmentation-101");
        const Program csv = wltest::csvProgram("frag101__default.csv");
        QVERIFY(!csv.ops.empty());
        QCOMPARE(requestSequence(g.program), requestSequence(csv));
        // The explicit empty_cache() sits right before the second 200 MB request.
        std::size_t emptyCaches = 0;
        for (std::size_t i = 0; i < g.program.ops.size(); ++i) {
            if (g.program.ops[i].kind != OpKind::EmptyCache) continue;
            ++emptyCaches;
            std::size_t j = i + 1;
            while (g.program.ops[j].kind != OpKind::Alloc) ++j;
            QCOMPARE(g.program.ops[j].size, std::uint64_t(200'000'000));
        }
        QCOMPARE(emptyCaches, std::size_t(1));
        QVERIFY(!g.program.labels.empty());
        QVERIFY(g.stacks.size() > 1);
    }

    void llmTrainingIssuesTrainGptsRequestsAtItsShape() {
        const GeneratedProgram g = wltest::generate("llm-training");
        const Program csv = wltest::csvProgram("train_gpt__default.csv");
        QCOMPARE(csv.ops.size(), std::size_t(5377));
        QCOMPARE(requestSequence(g.program), requestSequence(csv));
    }

    void llmTrainingOptionsChangeTheProgram() {
        const auto base = wltest::generate("llm-training", smallParams("llm-training"));
        auto with = [&](const char* k, const char* v) {
            auto p = smallParams("llm-training");
            p.emplace_back(k, v);
            return wltest::generate("llm-training", p);
        };
        auto bytes = [](const Program& p) {
            std::uint64_t s = 0;
            for (const Op& op : p.ops) s += op.kind == OpKind::Alloc ? op.size : 0;
            return s;
        };
        QVERIFY(requestSequence(with("precision", "bf16").program) != requestSequence(base.program));
        QVERIFY(requestSequence(with("checkpointing", "true").program) != requestSequence(base.program));
        QVERIFY(with("accumulation", "2").program.ops.size() > base.program.ops.size());
        QVERIFY(bytes(with("optimizer", "sgd").program) < bytes(base.program));
    }

    void sameSeedSameProgramDifferentSeedDifferentProgram() {
        for (const auto& w : WorkloadRegistry::instance().all()) {
            const auto params = w->resolve(smallParams(w->name()));
            const auto a = w->generate(params, 7);
            const auto b = w->generate(params, 7);
            QVERIFY2(key(a.program) == key(b.program), w->name().c_str());
            QVERIFY2(a.program.labels == b.program.labels, w->name().c_str());
            const auto c = w->generate(params, 8);
            if (w->usesSeed()) {
                QVERIFY2(key(a.program) != key(c.program), w->name().c_str());
            } else {
                QVERIFY2(key(a.program) == key(c.program), w->name().c_str());
            }
        }
    }

    void everyProgramIsWellFormed() {
        // Every free names a live tensor, every tensor is allocated once, phases nest.
        for (const auto& w : WorkloadRegistry::instance().all()) {
            const auto g = w->generate(w->resolve(smallParams(w->name())), 3);
            std::set<std::uint64_t> live, pending, seen;
            int depth = 0;
            for (const Op& op : g.program.ops) {
                switch (op.kind) {
                case OpKind::Alloc:
                    QVERIFY2(seen.insert(op.id).second, w->name().c_str());
                    live.insert(op.id);
                    break;
                case OpKind::Free:
                    QVERIFY2(live.erase(op.id) == 1, w->name().c_str());
                    pending.insert(op.id);
                    break;
                case OpKind::RecordStream: QVERIFY2(live.count(op.id) == 1, w->name().c_str()); break;
                case OpKind::CompletePending: QVERIFY2(pending.count(op.id) == 1, w->name().c_str()); break;
                case OpKind::Phase:
                    depth += op.begin ? 1 : -1;
                    QVERIFY(depth >= 0);
                    QVERIFY(op.labelId < g.program.labels.size());
                    break;
                default: break;
                }
                if (op.kind == OpKind::Alloc && op.stackId != 0) QVERIFY(op.stackId < g.stacks.size());
            }
            QCOMPARE(depth, 0);
        }
    }

    void multiStreamFreesStayPendingUntilTheUsingStreamMoves() {
        const auto g = wltest::generate("multi-stream", smallParams("multi-stream"));
        std::size_t records = 0, completes = 0;
        std::set<StreamId> streams;
        for (const Op& op : g.program.ops) {
            records += op.kind == OpKind::RecordStream;
            completes += op.kind == OpKind::CompletePending;
            if (op.kind == OpKind::Alloc) streams.insert(op.stream);
        }
        QVERIFY(records >= 60);
        QVERIFY(completes > 0);
        QCOMPARE(streams.size(), std::size_t(2));
        // In the allocator: a free_requested whose free_completed comes from a later op.
        VectorSink sink;
        SimulatedDevice gpu(*findGpuPreset("h100-80gb"));
        CachingAllocator allocator(AllocatorConfig{}, gpu, &sink);
        ProgramRunner runner(allocator);
        QVERIFY(runner.run(g.program).ok());
        std::map<std::uint64_t, std::uint64_t> requestedAt;
        std::size_t late = 0;
        for (const Event& e : sink.events) {
            if (e.action == EventAction::FreeRequested) requestedAt[e.address] = e.opIndex;
            if (e.action == EventAction::FreeCompleted && e.opIndex > requestedAt[e.address]) ++late;
        }
        QVERIFY(late > 0);
    }

    void randomMixStreamsWhatItGenerates() {
        const Workload& w = WorkloadRegistry::instance().get("random-mix");
        const auto params = w.resolve({{"events", "150000"}});
        const auto whole = w.generate(params, 5);
        QVERIFY(whole.program.ops.size() >= 150000);
        auto source = w.open(params, 5);
        std::vector<Op> chunk;
        std::vector<Op> joined;
        std::size_t chunks = 0;
        while (source->nextChunk(chunk)) {
            QVERIFY(chunk.size() <= 70000);  // bounded memory: chunks, not the whole program
            joined.insert(joined.end(), chunk.begin(), chunk.end());
            ++chunks;
        }
        QVERIFY(chunks >= 3);
        Program p;
        p.ops = joined;
        QVERIFY(key(p) == key(whole.program));
        std::set<StreamId> streams;
        for (const Op& op : joined) {
            if (op.kind == OpKind::Alloc) streams.insert(op.stream);
        }
        QCOMPARE(streams.size(), std::size_t(3));
    }
};

QTEST_GUILESS_MAIN(TestWorkloads)
#include "TestWorkloads.moc"
