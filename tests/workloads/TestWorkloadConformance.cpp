// Generated workloads against PyTorch's real numbers (traces/pytorch-2.11-h100):
// fragmentation-101 reproduces frag101__C.json on every memory_stats() key under all five
// shared configs; llm-training lands within 5 % (default) / 10 % (other configs) of
// train_gpt__C.json's peaks; the cudaMallocAsync model stays within its stated error bounds.
//
// Measured: frag101 matches all 122 keys under all five configs. llm-training issues exactly
// train_gpt's requests and matches both peaks exactly under default, expandable, msplit128 and
// gc06_msplit256; under rup4 peak reserved is exact and peak allocated is 1,572,864 B (0.033 %)
// high. That difference is placement only: the real trace's own program gives the same number
// on the simulated device, and exactly PyTorch's number when replayed with the recorded
// addresses (equal-size ties break by address, and here a tie picks a block whose unsplit tail
// counts as allocated).
#include <QtTest>

#include <cmath>

#include "WorkloadTestUtil.h"
#include "allocator/compare/AsyncBackendModel.h"
#include "allocator/core/CachingAllocator.h"
#include "allocator/core/ProgramRunner.h"
#include "allocator/device/GpuPresets.h"
#include "allocator/device/SimulatedDevice.h"

using namespace allocscope::alloc;

class TestWorkloadConformance : public QObject {
    Q_OBJECT
private slots:
    void fragmentation101ReproducesEveryKey_data() {
        QTest::addColumn<QString>("suffix");
        QTest::addColumn<QString>("config");
        for (const auto& [suffix, text] : wltest::sharedConfigs()) {
            QTest::newRow(suffix.c_str()) << QString::fromStdString(suffix) << QString::fromStdString(text);
        }
    }
    void fragmentation101ReproducesEveryKey() {
        QFETCH(QString, suffix);
        QFETCH(QString, config);
        const QJsonObject truth = wltest::groundTruth("frag101__" + suffix + ".json");
        QCOMPARE(truth.value("PYTORCH_CUDA_ALLOC_CONF").toString(), config);
        const QJsonObject expected = truth.value("memory_stats").toObject();
        QCOMPARE(expected.size(), 122);
        const GeneratedProgram g = wltest::generate("fragmentation-101");
        SimulatedDevice gpu(static_cast<std::uint64_t>(truth.value("total_memory").toDouble()), 552'402'944ull);
        CachingAllocator allocator(parseConfig(config.toStdString()).config, gpu);
        ProgramRunner runner(allocator);
        const ProgramResult result = runner.run(g.program);
        QVERIFY(result.ok());
        QVERIFY(result.ooms.empty());
        QStringList differences;
        for (const auto& [k, v] : allocator.stats().flatten()) {
            const QString key = QString::fromStdString(k);
            const auto want = static_cast<std::int64_t>(expected.value(key).toDouble());
            if (!expected.contains(key) || want != v) {
                differences << QString("%1: ours %2, PyTorch %3").arg(key).arg(v).arg(want);
            }
        }
        QVERIFY2(differences.isEmpty(), qPrintable(differences.join("; ")));
    }

    void llmTrainingMatchesTrainGptPeaks_data() {
        QTest::addColumn<QString>("suffix");
        QTest::addColumn<QString>("config");
        QTest::addColumn<double>("bound");
        for (const auto& [suffix, text] : wltest::sharedConfigs()) {
            QTest::newRow(suffix.c_str()) << QString::fromStdString(suffix) << QString::fromStdString(text)
                                          << (suffix == "default" ? 0.05 : 0.10);
        }
    }
    void llmTrainingMatchesTrainGptPeaks() {
        QFETCH(QString, suffix);
        QFETCH(QString, config);
        QFETCH(double, bound);
        const QJsonObject stats = wltest::groundTruth("train_gpt__" + suffix + ".json").value("memory_stats").toObject();
        const double wantAllocated = stats.value("allocated_bytes.all.peak").toDouble();
        const double wantReserved = stats.value("reserved_bytes.all.peak").toDouble();
        QVERIFY(wantAllocated > 0 && wantReserved > 0);
        const GeneratedProgram g = wltest::generate("llm-training");  // 6 layers, d=768, 12 heads, 32k vocab, 8 x 512, 5 steps
        CompareOptions o;
        o.fragmentationAtPeak = false;
        const RunMetrics m = ComparisonEngine::runOne(g.program, wltest::config(config.toStdString()), wltest::h100(), o);
        QVERIFY(!m.oom() && !m.error);
        const double errAllocated = std::abs(static_cast<double>(m.peakAllocated) / wantAllocated - 1.0);
        const double errReserved = std::abs(static_cast<double>(m.peakReserved) / wantReserved - 1.0);
        qInfo("train_gpt %s: peak allocated %llu vs %.0f (%.3f %%), peak reserved %llu vs %.0f (%.3f %%)",
              qPrintable(suffix), static_cast<unsigned long long>(m.peakAllocated), wantAllocated, errAllocated * 100,
              static_cast<unsigned long long>(m.peakReserved), wantReserved, errReserved * 100);
        QVERIFY2(errAllocated <= bound, qPrintable(QString("peak allocated off by %1 %").arg(errAllocated * 100)));
        QVERIFY2(errReserved <= bound, qPrintable(QString("peak reserved off by %1 %").arg(errReserved * 100)));
    }

    // The async model against PyTorch's numbers under backend:cudaMallocAsync. Stated bounds
    // (AsyncBackendModel.h): peak allocated exact for all three; peak reserved exact for
    // frag101, within 3 % for train_gpt, within 45 % for kv_growth_limited (a known miss: the
    // real pool keeps more memory for ever-growing buffers than the model).
    void asyncModelWithinStatedBounds_data() {
        QTest::addColumn<QString>("workload");
        QTest::addColumn<double>("reservedBound");
        QTest::newRow("frag101") << "frag101" << 0.0;
        QTest::newRow("train_gpt") << "train_gpt" << 0.03;
        QTest::newRow("kv_growth_limited") << "kv_growth_limited" << 0.45;
    }
    void asyncModelWithinStatedBounds() {
        QFETCH(QString, workload);
        QFETCH(double, reservedBound);
        const QJsonObject truth = wltest::groundTruth(workload + "__async.json");
        QCOMPARE(truth.value("PYTORCH_CUDA_ALLOC_CONF").toString(), QString("backend:cudaMallocAsync"));
        const QJsonObject stats = truth.value("memory_stats").toObject();
        // frag101's explicit empty_cache() is not in its CSV: use the generator (same requests).
        Program program = workload == "frag101" ? wltest::generate("fragmentation-101").program
                                                : wltest::csvProgram(workload + "__default.csv");
        QVERIFY(!program.ops.empty());
        std::optional<double> fraction;
        if (!truth.value("memory_fraction").isNull()) fraction = truth.value("memory_fraction").toDouble();
        AsyncBackendModel model(static_cast<std::uint64_t>(truth.value("total_memory").toDouble()), 552'402'944ull, fraction);
        const AsyncRunResult r = model.run(program);
        QVERIFY(!r.error);
        QVERIFY(r.ooms.empty());
        const double wantReserved = stats.value("reserved_bytes.all.peak").toDouble();
        const double err = std::abs(static_cast<double>(r.stats.reserved_bytes[kAggregate].peak) / wantReserved - 1.0);
        qInfo("async %s: peak reserved %lld vs %.0f (%.2f %%)", qPrintable(workload),
              static_cast<long long>(r.stats.reserved_bytes[kAggregate].peak), wantReserved, err * 100);
        QVERIFY2(err <= reservedBound + 1e-12, qPrintable(QString("reserved off by %1 %").arg(err * 100)));
        // Every key PyTorch reports under this backend is non-zero only where the model fills it.
        for (const auto& [k, v] : r.stats.flatten()) {
            const QString key = QString::fromStdString(k);
            const auto want = static_cast<std::int64_t>(stats.value(key).toDouble());
            if (key.startsWith("reserved_bytes.all.")) continue;  // bounded above
            if (key.startsWith("allocated_bytes.all.") || key.startsWith("active_bytes.all.")) {
                QVERIFY2(want == v, qPrintable(QString("%1: ours %2, PyTorch %3").arg(key).arg(v).arg(want)));
            } else {
                QVERIFY2(v == 0 && want == 0, qPrintable(QString("%1: ours %2, PyTorch %3").arg(key).arg(v).arg(want)));
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestWorkloadConformance)
#include "TestWorkloadConformance.moc"
