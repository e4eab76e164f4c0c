// RunProgress: what a reader in another process learns about a run that is still being
// recorded (its committed events, and that its recorder has not ended it), where
// SessionReader::run() can only say "interrupted".
#include <QTemporaryDir>
#include <QtTest>

#include "allocator/core/CachingAllocator.h"
#include "allocator/core/StackTable.h"
#include "allocator/device/SimulatedDevice.h"
#include "storage/session/RunProgress.h"
#include "storage/session/SessionError.h"
#include "storage/session/SessionReader.h"
#include "storage/session/SessionRecorder.h"
#include "storage/session/SessionWriter.h"

using namespace allocscope;

class TestRunProgress : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

private slots:
    void followsARecordingToItsEnd() {
        const std::string path = dir_.filePath("growing.allocscope").toStdString();
        storage::SessionWriter writer(path);
        alloc::SimulatedDevice device(2ull << 30, 0);
        storage::RecorderOptions options;
        options.batchEvents = 1;  // every event its own commit: the counts below are exact
        alloc::CachingAllocator fresh(alloc::AllocatorConfig{}, device, nullptr);
        storage::SessionRecorder recorder(writer, {}, fresh.stats(), options);
        alloc::CachingAllocator allocator(alloc::AllocatorConfig{}, device, &recorder);
        for (int i = 0; i < 5; ++i) allocator.malloc(1u << 20, 0);
        writer.flush();

        storage::SessionReader reader(path, false);
        const storage::RunProgress mid = storage::RunProgress::read(reader, 1);
        QCOMPARE(mid.events, recorder.eventCount());
        QVERIFY(mid.events > 0);
        QVERIFY(!mid.ended);
        QVERIFY(!mid.complete);
        QCOMPARE(reader.run(1).status, storage::RunStatus::Interrupted);  // what the run list can tell

        for (int i = 0; i < 5; ++i) allocator.malloc(8u << 20, 0);
        writer.flush();
        const storage::RunProgress later = storage::RunProgress::read(reader, 1);
        QCOMPARE(later.events, recorder.eventCount());
        QVERIFY(later.events > mid.events);
        QVERIFY(!later.ended);

        recorder.finish();
        const storage::RunProgress done = storage::RunProgress::read(reader, 1);
        QVERIFY(done.ended);
        QVERIFY(done.complete);
        QCOMPARE(done.events, recorder.eventCount());

        QVERIFY_THROWS_EXCEPTION(storage::SessionError, storage::RunProgress::read(reader, 2));
    }

    // A followed stack table's stacks go with each batch: a reader of the run while it records
    // finds the frames of the events it sees, not only after finish(); finish() keeps them.
    void stacksReachTheFileWithTheirEvents() {
        const std::string path = dir_.filePath("stacks.allocscope").toStdString();
        storage::SessionWriter writer(path);
        alloc::SimulatedDevice device(2ull << 30, 0);
        storage::RecorderOptions options;
        options.batchEvents = 1;
        alloc::StackTable stacks;
        storage::SessionRecorder recorder(writer, {}, alloc::DeviceStats{}, options);
        recorder.followStacks(&stacks);
        alloc::CachingAllocator allocator(alloc::AllocatorConfig{}, device, &recorder);
        const alloc::Stack first{{"train.py", 12, "forward"}, {"train.py", 40, "main"}};
        const alloc::Stack second{{"train.py", 13, "backward"}};
        allocator.malloc(1u << 20, 0, stacks.intern(first));
        writer.flush();
        storage::SessionReader reader(path, false);
        QCOMPARE(reader.stack(1, 1), first);
        QVERIFY(reader.stack(1, 2).empty());  // not interned yet

        allocator.malloc(2u << 20, 0, stacks.intern(second));
        writer.flush();
        QCOMPARE(reader.stack(1, 2), second);
        recorder.finish(&stacks);
        QCOMPARE(reader.stack(1, 1), first);
        QCOMPARE(reader.stack(1, 2), second);
        QVERIFY(storage::RunProgress::read(reader, 1).complete);
    }

    void aRecorderDestroyedUnfinishedEndsTheRunInterrupted() {
        const std::string path = dir_.filePath("dropped.allocscope").toStdString();
        {
            storage::SessionWriter writer(path);
            alloc::SimulatedDevice device(2ull << 30, 0);
            storage::SessionRecorder recorder(writer, {}, alloc::DeviceStats{}, {});
            alloc::CachingAllocator allocator(alloc::AllocatorConfig{}, device, &recorder);
            allocator.malloc(4096, 0);
        }
        storage::SessionReader reader(path, false);
        const storage::RunProgress progress = storage::RunProgress::read(reader, 1);
        QVERIFY(progress.ended);
        QVERIFY(!progress.complete);
        QVERIFY(progress.events > 0);
    }
};

QTEST_GUILESS_MAIN(TestRunProgress)
#include "TestRunProgress.moc"
