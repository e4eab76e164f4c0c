// ProgramRunner (ids -> addresses, op indices on events, OOMs, invalid ops) and the
// SimulatedDevice's accounting and default placement.
#include <QtTest>

#include "allocator/core/ProgramRunner.h"
#include "tests/allocator/AllocatorHarness.h"

using namespace allocscope::alloc;
using namespace allocscope::alloc::testing;

class TestProgramRunner : public QObject {
    Q_OBJECT
private slots:
    void runsAProgram() {
        Harness h;
        Program program;
        program.labels = {"step"};
        program.ops = {Op::phase(0, true),         Op::alloc(1, 5 * MiB),   Op::alloc(2, 3 * MiB, 0, 7),
                       Op::recordStream(1, 4),     Op::free(1),             Op::completePending(1),
                       Op::free(2),                Op::simple(OpKind::EmptyCache), Op::phase(0, false)};
        ProgramRunner runner(*h.allocator);
        const ProgramResult result = runner.run(program);
        QVERIFY(result.ok());
        QCOMPARE(result.opsRun, std::uint64_t(program.ops.size()));
        QVERIFY(result.ooms.empty());
        QCOMPARE(h.stats().reserved_bytes[kAggregate].current, std::int64_t(0));
        // Events carry the index of the op that caused them.
        const auto completed = h.eventsOf(EventAction::FreeCompleted);
        QCOMPARE(completed.size(), std::size_t(2));
        QCOMPARE(completed[0].opIndex, 5ull);
        QCOMPARE(h.eventsOf(EventAction::Alloc)[1].stackId, 7u);
        QCOMPARE(h.eventsOf(EventAction::SegmentFree)[0].opIndex, 7ull);
        QCOMPARE(h.check(), std::string());
    }
    void oomContinueOrStop() {
        Program program;
        program.ops = {Op::alloc(1, 600 * MiB), Op::alloc(2, 600 * MiB), Op::free(2), Op::free(1),
                       Op::alloc(3, 600 * MiB)};
        {
            Harness h({}, GiB);
            ProgramRunner runner(*h.allocator);
            const ProgramResult result = runner.run(program);
            QVERIFY(result.ok());
            QCOMPARE(result.ooms.size(), std::size_t(1));
            QCOMPARE(result.ooms[0].opIndex, 1ull);
            QCOMPARE(result.ooms[0].tensorId, 2ull);
            QVERIFY(result.ooms[0].message.rfind("CUDA out of memory. Tried to allocate 600.00 MiB", 0) == 0);
            QCOMPARE(result.opsRun, 5ull);  // free(2) of the failed tensor is a no-op
            QVERIFY(runner.addressOf(3).has_value());
        }
        {
            Harness h({}, GiB);
            ProgramRunner runner(*h.allocator, ProgramRunnerOptions{true});
            const ProgramResult result = runner.run(program);
            QVERIFY(result.stoppedAtOom);
            QCOMPARE(result.opsRun, 2ull);
        }
    }
    void invalidOps_data() {
        QTest::addColumn<int>("kind");
        QTest::addColumn<QString>("text");
        QTest::newRow("free") << int(OpKind::Free) << "op 1: free of unknown tensor id 99";
        QTest::newRow("record_stream") << int(OpKind::RecordStream) << "op 1: record_stream of unknown tensor id 99";
        QTest::newRow("complete_pending") << int(OpKind::CompletePending)
                                          << "op 1: complete_pending of tensor id 99, which has no pending free";
    }
    void invalidOps() {
        QFETCH(int, kind);
        QFETCH(QString, text);
        Harness h;
        Program program;
        Op bad;
        bad.kind = static_cast<OpKind>(kind);
        bad.id = 99;
        program.ops = {Op::alloc(1, MiB), bad, Op::free(1)};
        ProgramRunner runner(*h.allocator);
        const ProgramResult result = runner.run(program);
        QVERIFY(!result.ok());
        QCOMPARE(result.error->opIndex, 1ull);
        QCOMPARE(QString::fromStdString(result.error->message), text);
        QCOMPARE(result.opsRun, 1ull);
        QVERIFY(runner.addressOf(1).has_value());  // the run stopped before freeing it
    }
    void doubleAllocAndBadFraction() {
        Harness h;
        ProgramRunner runner(*h.allocator);
        Program twice;
        twice.ops = {Op::alloc(1, MiB), Op::alloc(1, MiB)};
        QCOMPARE(runner.run(twice).error->message, std::string("op 1: alloc of tensor id 1, which is still live"));
        Harness g;
        ProgramRunner other(*g.allocator);
        Program fraction;
        fraction.ops = {Op::setMemoryFraction(1.5)};
        QVERIFY(other.run(fraction).error->message.find("Please set within [0, 1]") != std::string::npos);
    }
    void completePendingAfterSynchronizeIsHarmless() {
        Harness h;
        Program program;
        program.ops = {Op::alloc(1, MiB), Op::recordStream(1, 3), Op::free(1), Op::simple(OpKind::Synchronize),
                       Op::alloc(2, MiB), Op::completePending(1), Op::free(2)};
        ProgramRunner runner(*h.allocator);
        const ProgramResult result = runner.run(program);
        QVERIFY2(result.ok(), result.error ? result.error->message.c_str() : "");
        QCOMPARE(h.stats().active[kAggregate].current, std::int64_t(0));
        QCOMPARE(h.check(), std::string());
    }
    void zeroSizeAlloc() {
        Harness h;
        Program program;
        program.ops = {Op::alloc(1, 0), Op::free(1)};
        ProgramRunner runner(*h.allocator);
        QVERIFY(runner.run(program).ok());
        QCOMPARE(h.events.events.size(), std::size_t(0));
    }

    void deviceAccounting() {
        SimulatedDevice device(GiB, 100 * MiB);
        QCOMPARE(device.freeMemory(), GiB - 100 * MiB);
        const auto a = device.allocateSegment(20 * MiB, 0);
        QVERIFY(a.has_value());
        QCOMPARE(*a, SimulatedDevice::kSegmentBase);
        const auto b = device.allocateSegment(2 * MiB, 0);
        QCOMPARE(*b, SimulatedDevice::kSegmentBase + 20 * MiB);
        device.freeSegment(*a, 20 * MiB);
        const auto c = device.allocateSegment(4 * MiB, 0);  // first fit: the hole at the base
        QCOMPARE(*c, SimulatedDevice::kSegmentBase);
        QCOMPARE(device.usedBytes(), 6 * MiB);
        QVERIFY(!device.allocateSegment(GiB, 0).has_value());
        const auto r = device.reserveAddressRange(200 * MiB, 20 * MiB, 0);
        QCOMPARE(*r, SimulatedDevice::kReservationBase);
        QVERIFY(device.mapPages(*r, 40 * MiB));
        QCOMPARE(device.usedBytes(), 46 * MiB);
        device.unmapPages(*r + 20 * MiB, 20 * MiB);
        QCOMPARE(device.usedBytes(), 26 * MiB);
        device.releaseAddressRange(*r, 200 * MiB);  // releases the still-mapped page too
        QCOMPARE(device.usedBytes(), 6 * MiB);
        QVERIFY(!device.mapPages(*r, 2 * GiB));
        QCOMPARE(*device.processMemoryInUse(), 106 * MiB);
    }
    void addressOracle() {
        SimulatedDevice device(GiB, 0);
        device.setAddressOracle([](const PlacementRequest& request) -> std::optional<std::uint64_t> {
            if (request.size == 20 * MiB) return 0x1230000000ull;
            return std::nullopt;
        });
        QCOMPARE(*device.allocateSegment(20 * MiB, 0), 0x1230000000ull);
        QCOMPARE(*device.allocateSegment(2 * MiB, 0), SimulatedDevice::kSegmentBase);
    }
};

QTEST_GUILESS_MAIN(TestProgramRunner)
#include "TestProgramRunner.moc"
