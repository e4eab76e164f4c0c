// Property tests: per option family, N random operations (default 100,000; env
// ALLOCSCOPE_PROPERTY_OPS overrides; env ALLOCSCOPE_PROPERTY_SEED fixes the seed) on four
// streams with record_stream, pending frees completed later, synchronize, empty_cache, fraction
// changes and resets, with the InvariantChecker after every operation.
#include <QtTest>

#include <chrono>

#include "tests/allocator/RandomOpDriver.h"

using namespace allocscope::alloc;
using namespace allocscope::alloc::testing;

namespace {
std::uint64_t envNumber(const char* name, std::uint64_t fallback) {
    const QByteArray value = qgetenv(name);
    bool ok = false;
    const qulonglong parsed = value.toULongLong(&ok);
    return ok ? parsed : fallback;
}
}  // namespace

class TestAllocatorProperties : public QObject {
    Q_OBJECT
private slots:
    void family_data() {
        QTest::addColumn<int>("index");
        const auto families = propertyFamilies();
        for (std::size_t i = 0; i < families.size(); ++i) {
            QTest::newRow(families[i].name.c_str()) << static_cast<int>(i);
        }
    }
    void family() {
        QFETCH(int, index);
        const PropertyFamily family = propertyFamilies()[static_cast<std::size_t>(index)];
        const std::uint64_t ops = envNumber("ALLOCSCOPE_PROPERTY_OPS", 100000);
        const std::uint64_t seed = envNumber(
            "ALLOCSCOPE_PROPERTY_SEED",
            static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) % 1000000007ull);
        qInfo("family %s: %llu ops, seed %llu (rerun with ALLOCSCOPE_PROPERTY_SEED=%llu)", family.name.c_str(),
              static_cast<unsigned long long>(ops), static_cast<unsigned long long>(seed),
              static_cast<unsigned long long>(seed));
        RandomOpDriver driver(family, seed + static_cast<std::uint64_t>(index));
        const auto start = std::chrono::steady_clock::now();
        const std::string failure = driver.run(ops);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        QVERIFY2(failure.empty(), failure.c_str());
        qInfo("family %s: ok, %llu OOMs, %.1f s", family.name.c_str(), static_cast<unsigned long long>(driver.ooms()),
              seconds);
        // The run must have exercised the interesting paths, or the property proves little.
        if (ops >= 10000) {
            const CountingSink& counts = driver.eventCounts();
            QVERIFY(driver.ooms() > 0);
            QVERIFY(counts.count(EventAction::FreeCompleted) > counts.count(EventAction::FreeRequested) / 2);
            if (family.config.expandableSegments) {
                QVERIFY(counts.count(EventAction::SegmentMap) > 0 && counts.count(EventAction::SegmentUnmap) > 0);
            } else {
                QVERIFY(counts.count(EventAction::SegmentAlloc) > 0 && counts.count(EventAction::SegmentFree) > 0);
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestAllocatorProperties)
#include "TestAllocatorProperties.moc"
