// memory_summary() byte for byte: DeviceStats built from each recorded trace's final
// memory_stats() must format to exactly the summary text PyTorch printed for it.
#include <QtTest>

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>

#include "allocator/core/MemorySummary.h"

using namespace allocscope::alloc;

namespace {
QString dataDir() {
    const QByteArray env = qgetenv("ALLOCSCOPE_TEST_DATA");
    return env.isEmpty() ? QStringLiteral(ALLOCSCOPE_TEST_DATA) : QString::fromLocal8Bit(env);
}
}  // namespace

class TestMemorySummary : public QObject {
    Q_OBJECT
private slots:
    void matchesPyTorch_data() {
        QTest::addColumn<QString>("path");
        const QDir dir(dataDir() + "/traces");
        const QStringList files = dir.entryList({"*.json"}, QDir::Files, QDir::Name);
        QVERIFY2(files.size() >= 10, "trace corpus missing");
        for (const QString& file : files) QTest::newRow(file.toUtf8().constData()) << dir.filePath(file);
    }
    void matchesPyTorch() {
        QFETCH(QString, path);
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QJsonObject root = QJsonDocument::fromJson(file.readAll()).object();
        const QJsonObject statsJson = root.value("memory_stats").toObject();
        const std::string expected = root.value("summary").toString().toStdString();
        QVERIFY(!expected.empty());
        DeviceStats stats;
        for (auto it = statsJson.begin(); it != statsJson.end(); ++it) {
            QVERIFY2(stats.set(it.key().toStdString(), it.value().toInteger()), qPrintable(it.key()));
        }
        const std::string actual = formatMemorySummary(stats, 0, false);
        QCOMPARE(actual, expected);
        // abbreviated=True prints the same without the per-pool rows.
        std::string abbreviated;
        std::size_t start = 0;
        while (start < expected.size()) {
            const std::size_t end = expected.find('\n', start);
            const std::string line = expected.substr(start, end - start + 1);
            if (line.find("from large pool") == std::string::npos && line.find("from small pool") == std::string::npos) {
                abbreviated += line;
            }
            start = end + 1;
        }
        QCOMPARE(formatMemorySummary(stats, 0, true), abbreviated);
    }
    void deviceIdAndUnits() {
        DeviceStats stats;
        stats.num_ooms = 3;
        stats.num_alloc_retries = 12;
        stats.reserved_bytes[kAggregate].current = 800 * 1024;  // >= 768 KiB: KiB
        stats.reserved_bytes[kAggregate].peak = 767 * 1024;     // < 768 KiB: bytes
        stats.allocation[kAggregate].allocated = 750000;        // >= 750,000: K
        stats.allocation[kAggregate].freed = 749999;
        const std::string text = formatMemorySummary(stats, 5, true);
        QVERIFY(text.find("|                  PyTorch CUDA memory summary, device ID 5                 |\n") !=
                std::string::npos);
        QVERIFY(text.find("|            CUDA OOMs: 3            |        cudaMalloc retries: 12        |\n") !=
                std::string::npos);
        QVERIFY(text.find("| GPU reserved memory   |    800 KiB | 785408 B   |      0 B   |      0 B   |\n") !=
                std::string::npos);
        QVERIFY(text.find("| Allocations           |       0    |       0    |     750 K  |  749999    |\n") !=
                std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestMemorySummary)
#include "TestMemorySummary.moc"
