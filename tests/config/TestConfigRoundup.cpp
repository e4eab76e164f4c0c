// roundup_power2_divisions: the interval table PyTorch 2.11 builds from the single and list forms
// (reference §1.3), including the upstream AllocatorConfig_test.cpp cases.
#include <QtTest>

#include "allocator/config/ConfigParser.h"

using namespace allocscope::alloc;

namespace {
using Table = std::array<std::uint64_t, 16>;
}
Q_DECLARE_METATYPE(Table)

class TestConfigRoundup : public QObject {
    Q_OBJECT

private slots:
    // Divisions for a request of `mib` MiB.
    void lookup_data() {
        QTest::addColumn<QString>("config");
        QTest::addColumn<double>("mib");
        QTest::addColumn<qulonglong>("divisions");

        // Upstream unit test: key K covers [K, 2K) MiB; the first key also covers everything below.
        const QString up1 = "roundup_power2_divisions:[64:8,128:2,256:4,512:2,1024:4,>:1]";
        QTest::newRow("upstream 32 MiB") << up1 << 32.0 << 8ull;
        QTest::newRow("upstream 64 MiB") << up1 << 64.0 << 8ull;
        QTest::newRow("upstream 128 MiB") << up1 << 128.0 << 2ull;
        QTest::newRow("upstream 256 MiB") << up1 << 256.0 << 4ull;
        QTest::newRow("upstream 512 MiB") << up1 << 512.0 << 2ull;
        QTest::newRow("upstream 1024 MiB") << up1 << 1024.0 << 4ull;
        QTest::newRow("upstream 2048 MiB") << up1 << 2048.0 << 1ull;
        QTest::newRow("upstream 1 byte") << up1 << 0.0 << 8ull;
        // Upstream: an interval nobody set stays 0.
        QTest::newRow("upstream 1024 MiB -> 0") << "roundup_power2_divisions:[128:8,256:16,512:1,2048:8,>:2]" << 1024.0
                                                << 0ull;
        QTest::newRow("upstream 2048 MiB -> 8") << "roundup_power2_divisions:[128:8,256:16,512:1,2048:8,>:2]" << 2048.0
                                                << 8ull;
        QTest::newRow("upstream 4096 MiB -> 2") << "roundup_power2_divisions:[128:8,256:16,512:1,2048:8,>:2]" << 4096.0
                                                << 2ull;
        // Reference §1.3/§1.4 observed table.
        const QString obs = "roundup_power2_divisions:[256:1,512:2,1024:4,>:8]";
        QTest::newRow("obs 300 MiB") << obs << 300.0 << 1ull;
        QTest::newRow("obs 511 MiB") << obs << 511.0 << 1ull;
        QTest::newRow("obs 600 MiB") << obs << 600.0 << 2ull;
        QTest::newRow("obs 1100 MiB") << obs << 1100.0 << 4ull;
        QTest::newRow("obs 2100 MiB") << obs << 2100.0 << 8ull;
        QTest::newRow("obs 64 GiB") << obs << 65536.0 << 8ull;
        QTest::newRow("single 4, 1 MiB") << "roundup_power2_divisions:4" << 1.0 << 4ull;
        QTest::newRow("single 4, 40 GiB") << "roundup_power2_divisions:4" << 40960.0 << 4ull;
        QTest::newRow("default") << "" << 600.0 << 0ull;
    }

    void lookup() {
        QFETCH(QString, config);
        QFETCH(double, mib);
        QFETCH(qulonglong, divisions);
        const ParseResult r = parseConfig(config.toStdString());
        QVERIFY(r.accepted());
        const auto bytes = mib == 0.0 ? std::uint64_t{1} : static_cast<std::uint64_t>(mib * static_cast<double>(kMiB));
        QCOMPARE(static_cast<qulonglong>(r.config.roundupDivisionsFor(bytes)), divisions);
    }

    // The whole table for the fill rules: first key fills below, `>` fills after the last key set.
    void table_data() {
        QTest::addColumn<QString>("config");
        QTest::addColumn<Table>("expected");
        QTest::newRow("single") << "roundup_power2_divisions:2" << Table{2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2};
        QTest::newRow("first key fills below") << "roundup_power2_divisions:[256:1]"
                                               << Table{1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0};
        QTest::newRow("> after last set") << "roundup_power2_divisions:[256:1,512:2,1024:4,>:8]"
                                          << Table{1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 4, 8, 8, 8, 8, 8};
        QTest::newRow("> alone starts after entry 0") << "roundup_power2_divisions:[>:4]"
                                                      << Table{0, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4};
        QTest::newRow("> before keys is overwritten by them") << "roundup_power2_divisions:[>:4,256:1]"
                                                              << Table{1, 1, 1, 1, 1, 1, 1, 1, 1, 4, 4, 4, 4, 4, 4, 4};
        QTest::newRow("key 1 MiB is entry 0") << "roundup_power2_divisions:[1:4]"
                                              << Table{4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
        QTest::newRow("key past 32 GiB clamps to entry 15") << "roundup_power2_divisions:[65536:2]"
                                                            << Table{2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2};
        QTest::newRow("zero disables an interval") << "roundup_power2_divisions:[64:8,128:0,>:4]"
                                                   << Table{8, 8, 8, 8, 8, 8, 8, 0, 4, 4, 4, 4, 4, 4, 4, 4};
        QTest::newRow("keys out of order") << "roundup_power2_divisions:[1024:4,256:1]"
                                           << Table{4, 4, 4, 4, 4, 4, 4, 4, 1, 4, 4, 0, 0, 0, 0, 0};
        QTest::newRow("> after an out-of-order key") << "roundup_power2_divisions:[1024:4,256:1,>:2]"
                                                     << Table{4, 4, 4, 4, 4, 4, 4, 4, 1, 2, 2, 2, 2, 2, 2, 2};
        QTest::newRow("trailing comma in list") << "roundup_power2_divisions:[256:1,]"
                                                << Table{1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0};
    }

    void table() {
        QFETCH(QString, config);
        QFETCH(Table, expected);
        const ParseResult r = parseConfig(config.toStdString());
        QVERIFY2(r.accepted(), r.pytorchMessage.c_str());
        for (std::size_t i = 0; i < 16; ++i) {
            QVERIFY2(r.config.roundupPower2Divisions[i] == expected[i],
                     qPrintable(QString("entry %1: got %2, want %3")
                                    .arg(i)
                                    .arg(r.config.roundupPower2Divisions[i])
                                    .arg(expected[i])));
        }
        // And the canonical text rebuilds the same table.
        QVERIFY(parseConfig(formatConfig(r.config)).config.roundupPower2Divisions == expected);
    }
};

QTEST_GUILESS_MAIN(TestConfigRoundup)
#include "TestConfigRoundup.moc"
