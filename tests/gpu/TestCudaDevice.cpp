#include <QtTest>

#include "allocator/device/CudaProbe.h"

#ifdef ALLOCSCOPE_HAVE_CUDA
#include "allocator/device/cuda/CudaAsyncBackend.h"
#include "allocator/device/cuda/CudaDevice.h"
#include "allocator/device/cuda/CudaError.h"
#include "tests/gpu/CudaChecks.h"
#endif

// The CUDA backend. On a machine without a GPU (CI) the behaviour checks show as Skipped and
// only the "no GPU" paths are tested: they must fail with a clear CudaError, never crash.
class TestCudaDevice : public QObject {
    Q_OBJECT

private:
#ifdef ALLOCSCOPE_HAVE_CUDA
    void runCheck(const char* name) {
        if (auto reason = allocscope::alloc::CudaDevice::unavailableReason(0)) QSKIP(reason->c_str());
        for (const auto& check : allocscope::gpu::checks::all()) {
            if (std::string(check.name) != name) continue;
            const std::string failure = allocscope::gpu::checks::run(check);
            QVERIFY2(failure.empty(), failure.c_str());
            return;
        }
        QFAIL("no such check");
    }
#endif

private slots:
    void withoutGpuConstructionFailsClearly() {
#ifdef ALLOCSCOPE_HAVE_CUDA
        const auto reason = allocscope::alloc::CudaDevice::unavailableReason(0);
        if (!reason) QSKIP("a GPU is present: the no-GPU path cannot be exercised here");
        QVERIFY(reason->rfind("no GPU", 0) == 0);
        try {
            allocscope::alloc::CudaDevice device;
            QFAIL("CudaDevice was constructed without a GPU");
        } catch (const allocscope::alloc::CudaError& error) {
            QVERIFY2(std::string(error.what()).find("no GPU") != std::string::npos, error.what());
        }
        try {
            allocscope::alloc::CudaAsyncBackend backend(0);
            QFAIL("CudaAsyncBackend was constructed without a GPU");
        } catch (const allocscope::alloc::CudaError& error) {
            QVERIFY2(std::string(error.what()).find("no GPU") != std::string::npos, error.what());
        }
#else
        QSKIP("built without CUDA support");
#endif
    }
    void probeAndBackendAgree() {
        // CudaProbe (used by the CLI's `gpus` verb) and the backend must agree on "is there a GPU".
        const auto probe = allocscope::alloc::probeCudaDevices();
#ifdef ALLOCSCOPE_HAVE_CUDA
        QCOMPARE(probe.devices.empty(), allocscope::alloc::CudaDevice::unavailableReason(0).has_value());
#else
        QVERIFY(probe.devices.empty());
#endif
    }
#ifdef ALLOCSCOPE_HAVE_CUDA
    void segmentRoundTrip() { runCheck("segmentRoundTrip"); }
    void misuseThrows() { runCheck("misuseThrows"); }
    void outOfMemoryIsNotAnError() { runCheck("outOfMemoryIsNotAnError"); }
    void expandablePages() { runCheck("expandablePages"); }
    void translationEqualsSimulation() { runCheck("translationEqualsSimulation"); }
    void translationEqualsSimulationExpandable() { runCheck("translationEqualsSimulationExpandable"); }
    void allocatorOnRealPointers() { runCheck("allocatorOnRealPointers"); }
    void allocatorOnRealPointersExpandable() { runCheck("allocatorOnRealPointersExpandable"); }
    void asyncBackendStats() { runCheck("asyncBackendStats"); }
    void asyncBackendLifecycle() { runCheck("asyncBackendLifecycle"); }
    void streamEventsGuardPendingFrees() { runCheck("streamEventsGuardPendingFrees"); }
#endif
};

QTEST_GUILESS_MAIN(TestCudaDevice)
#include "TestCudaDevice.moc"
