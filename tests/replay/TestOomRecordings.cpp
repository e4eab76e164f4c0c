// Issue 35's acceptance on real PyTorch 2.11 OOM snapshots recorded on an H200 (tests/data/oom,
// tests/gpu/oom_tracegen.py): under a memory fraction (kv_frac_oom 0.03, gpt2_frac_oom 0.025)
// and on a device made really full by another cudaMalloc (kv_fulldev_oom). With no flags the
// inferred interval holds PyTorch's real limit, the replay at the chosen limit is exact and ends
// in PyTorch's memory_stats (all keys), the OOM message carries PyTorch's numbers wherever a
// snapshot knows them, and each what-if row's OOM / no OOM equals PyTorch's own run of that
// config (P__C recorded the same program under C).
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "ReplayTestData.h"
#include "allocator/compare/OomAnalyzer.h"
#include "allocator/config/ConfigParser.h"
#include "allocator/replay/LimitInference.h"
#include "allocator/replay/ProgramFromTrace.h"
#include "allocator/replay/TraceReplayer.h"
#include "storage/import/TraceFile.h"

using namespace allocscope;

namespace {

QString oomDir() { return QString::fromLocal8Bit(qgetenv("ALLOCSCOPE_TEST_DATA")) + "/oom"; }

QJsonObject readJson(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

// The part of PyTorch's OOM message from `from` up to `to` (or the end).
QString part(const QString& message, const QString& from, const QString& to = QString()) {
    const qsizetype a = message.indexOf(from);
    if (a < 0) return QString();
    const qsizetype b = to.isEmpty() ? -1 : message.indexOf(to, a);
    return b < 0 ? message.mid(a) : message.mid(a, b - a);
}

}  // namespace

class TestOomRecordings : public QObject {
    Q_OBJECT

private slots:
    void realOomRecordings_data() {
        QTest::addColumn<QString>("program");
        QTest::addColumn<bool>("fraction");
        QTest::newRow("kv_frac_oom") << "kv_frac_oom" << true;
        QTest::newRow("kv_fulldev_oom") << "kv_fulldev_oom" << false;
        QTest::newRow("gpt2_frac_oom") << "gpt2_frac_oom" << true;
    }

    void realOomRecordings() {
        QFETCH(QString, program);
        QFETCH(bool, fraction);
        const QString name = program + "__default";
        const QString pickle = oomDir() + "/" + name + ".pickle";
        if (!QFile::exists(pickle)) QSKIP("tests/data/oom not present");
        const QJsonObject truthJson = readJson(oomDir() + "/" + name + ".json");
        const replaytest::GroundTruth truth = replaytest::loadGroundTruth(name, oomDir());
        QVERIFY(truth.loaded);

        storage::TraceFile file = storage::TraceFile::read(pickle.toStdString());
        const alloc::RecordedTrace& trace = file.traces.front();
        const alloc::AllocatorConfig recorded = alloc::parseConfig(trace.settings.value_or("")).config;
        alloc::ReplayOptions base;
        base.config = recorded;
        const alloc::MemoryLimit limit = alloc::LimitInference::infer(trace, base, alloc::LimitDevice{});
        QCOMPARE(int(limit.source), int(alloc::MemoryLimit::Source::Inferred));
        QCOMPARE(int(limit.cause), int(fraction ? alloc::MemoryLimit::Cause::MemoryFraction : alloc::MemoryLimit::Cause::DeviceFull));
        // PyTorch's real limit: allowed_memory_maximum, or what the driver left the process.
        const std::uint64_t real =
            fraction ? static_cast<std::uint64_t>(*truth.fraction * static_cast<double>(truth.totalMemory))
                     : static_cast<std::uint64_t>(truthJson["mem_get_info_after_hold"].toArray()[0].toDouble());
        QVERIFY2(limit.low <= real && real <= limit.high, qPrintable(QString::fromStdString(limit.describe())));
        if (!fraction) QCOMPARE(limit.bytes, real);  // a full device: exact from device_free
        if (fraction) QCOMPARE(*limit.memoryFraction, *truth.fraction);  // the roundest fraction is the one used

        // Exact with no flags, and PyTorch's statistics at the end (every key).
        alloc::ReplayOptions options = base;
        alloc::LimitInference::apply(limit, options);
        const alloc::ReplayResult replayed = alloc::TraceReplayer::replay(trace, options);
        QVERIFY2(replayed.exact(), qPrintable(replaytest::describeInexact(replayed)));
        const QString stats = replaytest::diffStats(truth.stats, replayed.stats);
        QVERIFY2(stats.isEmpty(), qPrintable(stats));

        const alloc::Program whatIfProgram = alloc::programFromTrace(trace, {std::nullopt, 1ull << 50, limit.otherMemory});
        const alloc::OomAnswer a = alloc::OomAnalyzer::analyze(trace, recorded, limit, whatIfProgram);
        QCOMPARE(a.opIndex, *limit.oomOp);
        // The message's numbers that a snapshot determines are PyTorch's (the device's total and
        // the process's other memory are not in a snapshot).
        const QString ours = QString::fromStdString(a.pytorchMessage);
        const QString theirs = truthJson["oom"].toString();
        QCOMPARE(part(ours, "CUDA out of memory.", "GPU 0 has"), part(theirs, "CUDA out of memory.", "GPU 0 has"));
        QCOMPARE(part(ours, "of which", "Including"), part(theirs, "of which", "Including"));
        QCOMPARE(part(ours, "Of the allocated memory"), part(theirs, "Of the allocated memory"));

        // The what-if against PyTorch's own runs of each recorded config.
        QMap<QString, bool> pytorchOom;
        QFile index(oomDir() + "/index.json");
        QVERIFY(index.open(QIODevice::ReadOnly));
        for (const QJsonValue& v : QJsonDocument::fromJson(index.readAll()).array()) {
            const QJsonObject row = v.toObject();
            if (row["program"].toString() != program) continue;
            const QString conf = row["conf"].toString();
            pytorchOom[conf.isEmpty() ? "default" : conf] = row["oom"].toBool();
        }
        int compared = 0;
        for (const alloc::OomWhatIfRow& row : a.whatIf) {
            const QString config = QString::fromStdString(row.config);
            if (!pytorchOom.contains(config)) continue;
            QVERIFY2(row.oom == pytorchOom[config], qPrintable(config + ": " + QString::fromStdString(row.verdict)));
            if (row.oom) QCOMPARE(row.oomOp, limit.oomOp);  // PyTorch's OOMing configs fail at the same op
            ++compared;
        }
        QVERIFY2(compared >= 6, qPrintable(QString::number(compared)));
        QVERIFY(a.whatIf.front().recorded && a.whatIf.front().oom);
    }

    // Every recording that ends in an OOM, whatever its config, replays exact with no flags and
    // ends in PyTorch's memory_stats. Under garbage_collection_threshold (msplit128_gc06) the
    // interval is where the recorded gc decisions are reproduced: 3746911574 to 3767883093 B,
    // PyTorch's 0.025 x 150109880320 = 3752747008 among them.
    void everyOomRecordingReplaysExact_data() {
        QTest::addColumn<QString>("name");
        QFile index(oomDir() + "/index.json");
        if (!index.open(QIODevice::ReadOnly)) QSKIP("tests/data/oom not present");
        for (const QJsonValue& v : QJsonDocument::fromJson(index.readAll()).array()) {
            const QJsonObject row = v.toObject();
            if (!row["oom"].toBool()) continue;
            const QString name = row["program"].toString() + "__" + row["config"].toString();
            QTest::newRow(qPrintable(name)) << name;
        }
    }

    void everyOomRecordingReplaysExact() {
        QFETCH(QString, name);
        const QJsonObject truthJson = readJson(oomDir() + "/" + name + ".json");
        const replaytest::GroundTruth truth = replaytest::loadGroundTruth(name, oomDir());
        QVERIFY(truth.loaded);
        storage::TraceFile file = storage::TraceFile::read((oomDir() + "/" + name + ".pickle").toStdString());
        const alloc::RecordedTrace& trace = file.traces.front();
        alloc::ReplayOptions options;
        options.config = alloc::parseConfig(trace.settings.value_or("")).config;
        const alloc::MemoryLimit limit = alloc::LimitInference::infer(trace, options, alloc::LimitDevice{});
        QCOMPARE(int(limit.source), int(alloc::MemoryLimit::Source::Inferred));
        QVERIFY2(limit.pick.find("bounded by the OOMs alone") == std::string::npos, limit.pick.c_str());
        const std::uint64_t real =
            truth.fraction ? static_cast<std::uint64_t>(*truth.fraction * static_cast<double>(truth.totalMemory))
                           : static_cast<std::uint64_t>(truthJson["mem_get_info_after_hold"].toArray()[0].toDouble());
        QVERIFY2(limit.low <= real && real <= limit.high, limit.describe().c_str());
        // PyTorch's fraction, although for msplit128_gc06 0.025 of the total device_free implies
        // with the CUDA context alone falls 36,592 B below the interval (its process held 224 MiB
        // more outside PyTorch): the device is taken that much larger.
        if (truth.fraction) QCOMPARE(*limit.memoryFraction, *truth.fraction);
        alloc::LimitInference::apply(limit, options);
        const alloc::ReplayResult replayed = alloc::TraceReplayer::replay(trace, options);
        QVERIFY2(replayed.exact(), qPrintable(replaytest::describeInexact(replayed)));
        QVERIFY(replayed.emptyCacheSteps.empty() && replayed.poolRevisions == 0);
        const QString stats = replaytest::diffStats(truth.stats, replayed.stats);
        QVERIFY2(stats.isEmpty(), qPrintable(stats));
    }
};

QTEST_GUILESS_MAIN(TestOomRecordings)
#include "TestOomRecordings.moc"
