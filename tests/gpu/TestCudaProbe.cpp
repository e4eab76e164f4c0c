#include <QtTest>

#include "allocator/device/CudaProbe.h"

class TestCudaProbe : public QObject {
    Q_OBJECT
private slots:
    void probeNeverFails() {
        // Must return (not crash, not abort) on machines without a driver: that is CI.
        const auto result = allocscope::alloc::probeCudaDevices();
        if (result.devices.empty()) QVERIFY(!result.reason.empty());
    }
    void realDeviceReportsMemory() {
        const auto result = allocscope::alloc::probeCudaDevices();
        if (result.devices.empty()) QSKIP(qPrintable("no GPU: " + QString::fromStdString(result.reason)));
        QVERIFY(result.devices.front().totalMemory > 0);
    }
};

QTEST_GUILESS_MAIN(TestCudaProbe)
#include "TestCudaProbe.moc"
