// The numbers the views print: counts grouped by thousands, nouns in the right number (the app
// ships no translation file, so Qt's "%n run(s)" would print as it is), byte sizes and addresses.
#include <QtTest>

#include "views/util/Formatting.h"

using allocscope::views::Formatting;

class TestFormatting : public QObject {
    Q_OBJECT
private slots:
    void countsAndNouns() {
        QCOMPARE(Formatting::count(0), QString("0"));
        QCOMPARE(Formatting::count(1234567), QString("1,234,567"));
        QCOMPARE(Formatting::count(-1000), QString("-1,000"));
        QCOMPARE(Formatting::counted(1, "run", "runs"), QString("1 run"));
        QCOMPARE(Formatting::counted(0, "run", "runs"), QString("0 runs"));
        QCOMPARE(Formatting::counted(2, "config", "configs"), QString("2 configs"));
        QCOMPARE(Formatting::counted(12345, "op", "ops"), QString("12,345 ops"));
    }

    void bytesAndAddresses() {
        QCOMPARE(Formatting::bytes(qint64{512}), QString("512 B"));
        QCOMPARE(Formatting::bytes(qint64{20} << 20), QString("20.0 MiB"));
        QCOMPARE(Formatting::address(0x7f3a2c000000ull), QString("0x7f3a2c000000"));
    }
};

QTEST_GUILESS_MAIN(TestFormatting)
#include "TestFormatting.moc"
