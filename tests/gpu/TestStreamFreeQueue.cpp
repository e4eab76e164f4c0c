// StreamFreeQueue (record_stream pending frees) on a real GPU. Without one (CI) the behaviour
// checks show as Skipped and only the "no GPU" path runs: construction fails with a CudaError.
#include <QtTest>

#include "allocator/device/cuda/CudaDevice.h"
#include "allocator/device/cuda/CudaError.h"
#include "allocator/device/cuda/StreamFreeQueue.h"
#include "tests/gpu/StreamFreeSelfTest.h"

using allocscope::alloc::StreamFreeQueue;

class TestStreamFreeQueue : public QObject {
    Q_OBJECT
private slots:
    void withoutGpuConstructionFailsClearly() {
        if (!allocscope::alloc::CudaDevice::unavailableReason(0)) QSKIP("a GPU is present: the no-GPU path cannot be exercised here");
        try {
            StreamFreeQueue queue(0);
            QFAIL("StreamFreeQueue was constructed without a GPU");
        } catch (const allocscope::alloc::CudaError& error) {
            QVERIFY2(std::string(error.what()).find("cuda") != std::string::npos, error.what());
        }
    }

    // Every marking completes exactly the frees the held-then-released streams passed.
    void everyMarkingCompletesWhatTheStreamsPassed() {
        if (auto reason = allocscope::alloc::CudaDevice::unavailableReason(0)) QSKIP(reason->c_str());
        allocscope::gpu::RaceStreams streams(0);
        using Marking = StreamFreeQueue::Marking;
        for (Marking m : {Marking::Events, Marking::DriverEvents, Marking::DriverEventsTail, Marking::Counters, Marking::Mixed}) {
            const std::string failure = allocscope::gpu::streamFreeQueueSelfTest(streams, m);
            QVERIFY2(failure.empty(), failure.c_str());
        }
    }

    void theDefaultIsTheMixedMarking() {
        if (auto reason = allocscope::alloc::CudaDevice::unavailableReason(0)) QSKIP(reason->c_str());
        StreamFreeQueue queue(0);
        QCOMPARE(queue.marking(), StreamFreeQueue::Marking::Mixed);
        QVERIFY(queue.empty());
    }
};

QTEST_GUILESS_MAIN(TestStreamFreeQueue)
#include "TestStreamFreeQueue.moc"
