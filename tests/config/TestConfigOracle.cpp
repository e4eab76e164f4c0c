// parseConfig / reparseConfig against real PyTorch: tests/config/oracle/*.json records what
// torch 2.11.0+cu130 did with each string on an H100 (pytorch_oracle.py: a fresh process per
// string; import torch, CUDA init, one tensor, the snapshot's allocator settings, one
// pin_memory()). Every verdict, every PyTorch message and the parsed values must match.
#include <QtTest>

#include "allocator/config/ConfigParser.h"

using namespace allocscope::alloc;

namespace {

QJsonArray loadOracle() {
    QFile file(QStringLiteral(ALLOCSCOPE_SOURCE_DIR) + "/tests/config/oracle/pytorch-2.11.0-cu130-h100.json");
    if (!file.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(file.readAll()).array();
}

// The what() line of an uncaught c10::Error, as the terminate handler printed it.
QString abortWhat(const QString& terminate) {
    const int at = terminate.indexOf("what():");
    return at < 0 ? terminate : terminate.mid(at + 7).trimmed().section('\n', 0, 0);
}

QString verdictOf(const ParseResult& r) { return QString::fromUtf8(verdictName(r.verdict)); }

}  // namespace

class TestConfigOracle : public QObject {
    Q_OBJECT

private slots:
    void oracle_data() {
        QTest::addColumn<QJsonObject>("record");
        const QJsonArray all = loadOracle();
        QVERIFY2(all.size() >= 150, "the recorded oracle file is missing");
        for (const QJsonValue& v : all) {
            const QJsonArray c = v.toObject()["case"].toArray();
            QString name = c.size() > 1 ? "runtime: " + c[0].toString() + " | " + c[1].toString() : c[0].toString();
            name.replace('\t', "\\t").replace('\n', "\\n");
            QTest::newRow(qPrintable(name.isEmpty() ? QString("(empty)") : name)) << v.toObject();
        }
    }

    void oracle() {
        QFETCH(QJsonObject, record);
        const QJsonArray c = record["case"].toArray();
        const std::string env = c[0].toString().toStdString();
        const QJsonObject res = record["result"].toObject();
        const ParseResult r = parseConfig(env);

        if (record.contains("terminate")) {
            QCOMPARE(verdictOf(r), QString("abort-at-import"));
            QCOMPARE(abortWhat(QString::fromStdString(r.pytorchMessage)), abortWhat(record["terminate"].toString()));
            return;
        }
        QVERIFY2(!res.isEmpty(), "the recorded process died without a verdict");

        if (c.size() > 1) {  // the runtime setter on top of the environment string
            if (!r.accepted()) {
                // An async-loaded string whose error waits for the first reader: the setter is it.
                QCOMPARE(res["stage"].toString(), QString("runtime"));
                QCOMPARE(QString::fromStdString(r.pytorchMessage), res["exc_msg"].toString());
                return;
            }
            const ParseResult rt = reparseConfig(c[1].toString().toStdString(), r.config);
            if (res["stage"].toString() == "runtime_ok") {
                QCOMPARE(verdictOf(rt), QString("accepted"));
            } else if (res["stage"].toString() == "runtime") {
                const QString type = res["exc_type"].toString();
                QCOMPARE(verdictOf(rt), type == "ValueError" ? QString("value-error-at-init") : QString("runtime-error-at-init"));
                QCOMPARE(QString::fromStdString(rt.pytorchMessage), res["exc_msg"].toString());
            } else {
                // The environment string itself was recorded as failing ("" then re-read it).
                QVERIFY(!r.accepted() || res["stage"].toString() != "init");
            }
            return;
        }

        const QString stage = res["stage"].toString();
        const QString type = res["exc_type"].toString();
        if (stage == "init" && type != "OutOfMemoryError") {
            QCOMPARE(verdictOf(r), type == "ValueError" ? QString("value-error-at-init") : QString("runtime-error-at-init"));
            QCOMPARE(QString::fromStdString(r.pytorchMessage), res["exc_msg"].toString());
            return;
        }
        if (type == "OutOfMemoryError") {  // parsed fine; the cap of 0 bytes fails the first tensor
            QVERIFY(r.accepted());
            QCOMPARE(r.config.perProcessMemoryFraction.value_or(-1), 0.0);
            QVERIFY(std::any_of(r.diagnostics.begin(), r.diagnostics.end(),
                                [](const ConfigDiagnostic& d) { return d.code == "zero-fraction"; }));
            return;
        }
        QCOMPARE(stage, QString("ok"));
        // Import and CUDA init passed. Under the async backend an error may still come at the
        // first read of the config (recorded with pin_memory()).
        const QString pin = res["pin_memory"].toString();
        if (!pin.isEmpty() && pin != "ok") {
            const QString pinType = pin.section(':', 0, 0);
            QCOMPARE(verdictOf(r), pinType == "ValueError" ? QString("value-error-on-first-use")
                                                           : QString("runtime-error-on-first-use"));
            QCOMPARE(QString::fromStdString(r.pytorchMessage), pin.section(": ", 1));
            return;
        }
        if (pin.isEmpty() && r.config.backend == Backend::CudaMallocAsync && !r.accepted()) {
            // Recorded without the pin_memory() probe: only import and init are known to pass.
            QVERIFY(r.verdict == Verdict::ValueErrorOnFirstUse || r.verdict == Verdict::RuntimeErrorOnFirstUse);
            return;
        }
        QCOMPARE(verdictOf(r), QString("accepted"));
        checkValues(r.config, res["settings"].toObject());
    }

private:
    // The parsed values against what PyTorch reported.
    static void checkValues(const AllocatorConfig& config, const QJsonObject& s) {
        const bool async = s["backend"].toString() == "cudaMallocAsync";
        QCOMPARE(config.backend == Backend::CudaMallocAsync, async);
        const qint64 maxSplit = s["max_split_size"].toInteger(-2);
        if (async) {
            QCOMPARE(maxSplit, qint64{0});
            return;  // no snapshot under the async backend
        }
        QCOMPARE(maxSplit, config.maxSplitSize == kUnlimited ? qint64{-1} : static_cast<qint64>(config.maxSplitSize));
        // PyTorch reports the fraction back as cap / total memory, rounded to whole bytes.
        QVERIFY(std::abs(s["fraction"].toDouble() - config.perProcessMemoryFraction.value_or(1.0)) < 1e-9);
        const QJsonObject a = s["allocator_settings"].toObject();
        QCOMPARE(a["garbage_collection_threshold"].toDouble(), config.garbageCollectionThreshold);
        QCOMPARE(a["expandable_segments"].toBool(), config.expandableSegments);
        QCOMPARE(a["release_lock_on_cudamalloc"].toBool(), config.releaseLockOnCudaMalloc);
        QCOMPARE(a["pinned_use_cuda_host_register"].toBool(), config.pinnedUseCudaHostRegister);
        QCOMPARE(a["graph_capture_record_stream_reuse"].toBool(), config.graphCaptureRecordStreamReuse);
        QCOMPARE(static_cast<quint64>(a["pinned_num_register_threads"].toInteger()), config.pinnedNumRegisterThreads);
        const QJsonObject div = a["roundup_power2_divisions"].toObject();
        QCOMPARE(div.size(), 16);
        for (std::size_t i = 0; i < 16; ++i) {
            QCOMPARE(static_cast<quint64>(div[QString::number(1ull << i)].toInteger(-1)), config.roundupPower2Divisions[i]);
        }
    }
};

QTEST_GUILESS_MAIN(TestConfigOracle)
#include "TestConfigOracle.moc"
