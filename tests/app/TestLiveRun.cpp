// A run that another process is still recording (issue 38): the window opened on the session
// follows it as it grows. The "other process" is a SessionWriter and SessionRecorder of this
// test on the same file (their own connection, as liballocscope_torch.so's would be); the
// window only reads. The watcher's look is called directly (poll()) instead of waiting for its
// timer.
#include <QLabel>
#include <QSettings>
#include <QSignalSpy>
#include <QStatusBar>
#include <QtTest>

#include <memory>
#include <vector>

#include "allocator/core/CachingAllocator.h"
#include "allocator/device/SimulatedDevice.h"
#include "app/gui/AllocationsController.h"
#include "app/gui/LiveRunFollower.h"
#include "app/gui/MainWindow.h"
#include "app/gui/RunStateService.h"
#include "app/gui/SessionWatcher.h"
#include "storage/session/SessionRecorder.h"
#include "storage/session/SessionWriter.h"
#include "views/charts/TimelineChartView.h"
#include "views/util/Formatting.h"
#include "views/widgets/AllocationsPlot.h"
#include "views/widgets/AllocationsWidget.h"
#include "views/widgets/EventScrubber.h"
#include "views/widgets/HeatmapWidget.h"
#include "views/widgets/RunListModel.h"
#include "views/widgets/RunListWidget.h"

using namespace allocscope;
using app::MainWindow;

namespace {

constexpr int kTimeout = 60000;
constexpr std::uint64_t kMiB = 1ull << 20;

// The other process: a program allocating on a simulated GPU, recorded into `path` event by
// event (a batch of one: what is committed is exactly what was recorded).
class Recording {
public:
    explicit Recording(const QString& path) : writer_(path.toStdString()), device_(80ull << 30, 0) {
        storage::RecorderOptions options;
        options.batchEvents = 1;
        options.keyframeInterval = 16;
        const alloc::CachingAllocator fresh(alloc::AllocatorConfig{}, device_, nullptr);
        storage::RunInfo info;
        info.name = "live training";
        info.gpu = "h100-80gb";
        info.totalMemory = 80ull << 30;
        recorder_ = std::make_unique<storage::SessionRecorder>(writer_, info, fresh.stats(), options);
        allocator_ = std::make_unique<alloc::CachingAllocator>(alloc::AllocatorConfig{}, device_, recorder_.get());
    }

    // `count` allocations of `size` bytes each (each a segment of its own: a segment_alloc and
    // an alloc), committed.
    void allocate(int count, std::uint64_t size) {
        for (int i = 0; i < count; ++i) {
            live_.push_back(*allocator_->malloc(size, 0));
            recorder_->syncStats(allocator_->stats());
        }
        writer_.flush();
    }
    // Frees the first live allocation and empties the cache (op `op`): an empty_cache marker.
    void releaseOne(std::uint64_t op) {
        allocator_->setOpIndex(op);
        allocator_->free(live_.front());
        live_.erase(live_.begin());
        allocator_->emptyCache();
        recorder_->syncStats(allocator_->stats());
        writer_.flush();
    }
    qint64 committed() const { return static_cast<qint64>(recorder_->eventCount()); }
    void finish() { recorder_->finish(); }
    storage::SessionWriter& writer() { return writer_; }

private:
    storage::SessionWriter writer_;
    alloc::SimulatedDevice device_;
    std::unique_ptr<storage::SessionRecorder> recorder_;
    std::unique_ptr<alloc::CachingAllocator> allocator_;
    std::vector<std::uint64_t> live_;
};

qint64 peakAllocated(const views::TimelineData& data) {
    qint64 peak = 0;
    for (const views::TimelineBucket& b : data.buckets) peak = std::max(peak, b.bytes[static_cast<std::size_t>(views::TimelineMetric::Allocated)].max);
    return peak;
}

int bandsOfSize(const views::AllocationsData& data, quint64 size) {
    return static_cast<int>(std::count_if(data.bands.begin(), data.bands.end(), [size](const views::AllocationBandView& b) { return b.size == size; }));
}

qint64 currentAllocated(const app::RunStateFrame& frame) {
    for (const views::SummaryRow& row : frame.summary.rows) {
        if (row.metric == QLatin1String("Allocated memory")) return row.current;
    }
    return -1;
}

// Opens the window on `path` and shows run 1 at the event the overview picks.
void openOnRun(MainWindow& window, const QString& path) {
    window.resize(1280, 720);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(window.openSessionFile(path));
    QTRY_VERIFY_WITH_TIMEOUT(window.runList()->model()->rowCount() >= 1, kTimeout);
    window.selectRun(1);
    QTRY_VERIFY_WITH_TIMEOUT(window.currentFrame().run == 1 && !window.currentFrame().approximate && !window.stateService()->isLoadingOverview(),
                             kTimeout);
}

}  // namespace

class TestLiveRun : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

private slots:
    void initTestCase() {
        QCoreApplication::setOrganizationName("AllocScopeTest");
        QCoreApplication::setApplicationName("TestLiveRun");
        QSettings().clear();
        QVERIFY(dir_.isValid());
    }

    void viewsFollowTheGrowingRunToItsEnd() {
        const QString path = dir_.filePath("growing.allocscope");
        Recording recording(path);
        recording.allocate(3, 20 * kMiB);
        const qint64 before = recording.committed();

        MainWindow window;
        openOnRun(window, path);
        app::LiveRunFollower* live = window.liveFollower();
        QCOMPARE(window.scrubber()->eventCount(), before);
        QCOMPARE(peakAllocated(window.timeline()->data()), qint64(60 * kMiB));
        // The file says the run is not finished; it has not grown while shown.
        QVERIFY(live->label()->isVisible());
        QVERIFY(live->label()->text().contains(QStringLiteral("unfinished")));
        QVERIFY(!live->isLive());
        QTRY_VERIFY_WITH_TIMEOUT(!window.allocations()->plot()->data().bands.empty(), kTimeout);

        // The other process commits more: a higher peak, more segments.
        recording.allocate(4, 200 * kMiB);
        const qint64 after = recording.committed();
        QVERIFY(after > before);
        QVERIFY(window.sessionWatcher()->poll());

        // The user had not moved: the views follow the newest event.
        QTRY_VERIFY_WITH_TIMEOUT(window.scrubber()->eventCount() == after && window.currentFrame().shown == after - 1 &&
                                     !window.currentFrame().approximate,
                                 kTimeout);
        QCOMPARE(window.scrubber()->currentEvent(), after - 1);
        QCOMPARE(window.timeline()->data().buckets.back().lastEvent, after - 1);
        QCOMPARE(peakAllocated(window.timeline()->data()), qint64(860 * kMiB));
        QCOMPARE(window.heatmap()->data().eventCount, after);
        QVERIFY(window.heatmap()->data().columnFirstEvent.back() >= before);  // its columns reach the new events
        QCOMPARE(window.currentFrame().segments.segments.size(), std::size_t{7});
        QCOMPARE(currentAllocated(window.currentFrame()), qint64(860 * kMiB));
        QTRY_VERIFY_WITH_TIMEOUT(window.allocations()->plot()->data().eventCount == after, kTimeout);
        QCOMPARE(bandsOfSize(window.allocations()->plot()->data(), 200 * kMiB), 4);
        QVERIFY(live->isLive());
        QVERIFY(live->label()->isVisible());
        QVERIFY(live->label()->text().contains(QStringLiteral("recording — %1 events so far").arg(views::Formatting::count(after))));
        QCOMPARE(live->refreshCount(), 1);
        // The file calls an unended run interrupted; the run list says what the window knows.
        QTRY_COMPARE_WITH_TIMEOUT(window.runList()->model()->runs().front().status, QStringLiteral("recording"), kTimeout);
        QVERIFY(window.runList()->model()->data(window.runList()->model()->index(0, views::RunListModel::NameColumn)).toString().contains(
            QStringLiteral("recording")));

        // The run ends: a last re-query shows the final state, the run list its summary.
        recording.finish();
        recording.writer().flush();
        QVERIFY(window.sessionWatcher()->poll());
        QTRY_VERIFY_WITH_TIMEOUT(!live->label()->text().contains(QStringLiteral("so far")) && !window.stateService()->isLoadingOverview(), kTimeout);
        QTRY_COMPARE_WITH_TIMEOUT(window.runList()->model()->runs().front().status, QStringLiteral("complete"), kTimeout);
        QCOMPARE(window.runList()->model()->runs().front().peakReserved, qint64(860 * kMiB));
        QCOMPARE(window.runList()->selectedRun(), 1);
        QTRY_COMPARE_WITH_TIMEOUT(window.currentFrame().shown, after - 1, kTimeout);
        QVERIFY(!live->isLive());
        QCOMPARE(live->refreshCount(), 2);
        QVERIFY(live->label()->isVisible());
        QCOMPARE(live->label()->text(), QStringLiteral("run 1 finished recording — %1 events").arg(views::Formatting::count(after)));

        // An ended run is not looked at again.
        const int probes = live->probeCount();
        live->check();
        QCOMPARE(live->probeCount(), probes);
    }

    void anEarlierEventAndAZoomAreKeptAndAnUnchangedRunIsNotRequeried() {
        const QString path = dir_.filePath("kept.allocscope");
        Recording recording(path);
        recording.allocate(10, 20 * kMiB);
        const qint64 before = recording.committed();

        MainWindow window;
        openOnRun(window, path);
        app::LiveRunFollower* live = window.liveFollower();
        window.goToEvent(5);
        QTRY_VERIFY_WITH_TIMEOUT(window.currentFrame().requested == 5 && !window.currentFrame().approximate, kTimeout);
        QTRY_VERIFY_WITH_TIMEOUT(window.allocations()->plot()->data().eventCount == before, kTimeout);
        views::AllocationsPlot* plot = window.allocations()->plot();
        plot->setWindow(2, 14);  // the user zoomed in

        QSignalSpy overviews(window.stateService(), &app::RunStateService::overviewReady);
        recording.allocate(2, 300 * kMiB);
        const qint64 after = recording.committed();
        QVERIFY(window.sessionWatcher()->poll());
        QTRY_VERIFY_WITH_TIMEOUT(window.scrubber()->eventCount() == after && !window.currentFrame().approximate &&
                                     !window.stateService()->isLoadingOverview(),
                                 kTimeout);
        QTRY_VERIFY_WITH_TIMEOUT(plot->data().eventCount == after, kTimeout);
        QCOMPARE(overviews.count(), 1);
        QCOMPARE(window.scrubber()->currentEvent(), qint64{5});  // the user's event, not the live edge
        QCOMPARE(window.currentFrame().requested, qint64{5});
        QCOMPARE(window.timeline()->data().buckets.back().lastEvent, after - 1);
        QCOMPARE(plot->windowFirst(), 2.0);
        QCOMPARE(plot->windowLast(), 14.0);
        QVERIFY(live->isLive());

        // Another run starts in the session: the file changes, the shown run does not.
        const int refreshes = live->refreshCount();
        const int probes = live->probeCount();
        {
            alloc::SimulatedDevice device(1ull << 30, 0);
            const alloc::CachingAllocator fresh(alloc::AllocatorConfig{}, device, nullptr);
            storage::SessionRecorder other(recording.writer(), {}, fresh.stats(), {});
            alloc::CachingAllocator allocator(alloc::AllocatorConfig{}, device, &other);
            allocator.malloc(4 * kMiB, 0);
            other.finish();
        }
        QVERIFY(window.sessionWatcher()->poll());
        QTRY_COMPARE_WITH_TIMEOUT(window.runList()->model()->rowCount(), 2, kTimeout);
        QTRY_VERIFY_WITH_TIMEOUT(live->probeCount() == probes + 1 && !live->isProbing(), kTimeout);
        QCOMPARE(live->refreshCount(), refreshes);  // looked at, not re-queried
        QCOMPARE(overviews.count(), 1);
        QCOMPARE(window.scrubber()->eventCount(), after);
        QCOMPARE(window.scrubber()->currentEvent(), qint64{5});
        QVERIFY(live->label()->isVisible());

        // A user who returns to the last event follows the run again.
        window.goToEvent(after - 1);
        recording.allocate(1, 40 * kMiB);
        const qint64 latest = recording.committed();
        QVERIFY(window.sessionWatcher()->poll());
        QTRY_VERIFY_WITH_TIMEOUT(window.scrubber()->eventCount() == latest && window.currentFrame().shown == latest - 1 &&
                                     !window.currentFrame().approximate,
                                 kTimeout);
        recording.finish();
    }

    // The timeline's markers of the part already shown stay; the scan after a re-query reads
    // only the new events (the first release is not found twice).
    void markersGrowWithTheRun() {
        const QString path = dir_.filePath("markers.allocscope");
        Recording recording(path);
        recording.allocate(3, 20 * kMiB);
        recording.releaseOne(1);
        const qint64 firstRelease = recording.committed() - 1;

        MainWindow window;
        openOnRun(window, path);
        QTRY_COMPARE_WITH_TIMEOUT(window.timeline()->data().markers.size(), std::size_t{1}, kTimeout);
        QCOMPARE(window.timeline()->data().markers.front().kind, views::MarkerKind::EmptyCache);

        recording.allocate(2, 50 * kMiB);
        recording.releaseOne(2);
        const qint64 after = recording.committed();
        QVERIFY(window.sessionWatcher()->poll());
        QTRY_VERIFY_WITH_TIMEOUT(window.scrubber()->eventCount() == after && window.timeline()->data().markers.size() >= 2, kTimeout);
        QTRY_VERIFY_WITH_TIMEOUT(!window.stateService()->isScanningMarkers(), kTimeout);
        const std::vector<views::TimelineMarker>& markers = window.timeline()->data().markers;
        QCOMPARE(markers.size(), std::size_t{2});
        QCOMPARE(markers[0].event, firstRelease);
        QCOMPARE(markers[1].event, after - 1);
        QCOMPARE(markers[1].kind, views::MarkerKind::EmptyCache);
        recording.finish();
    }
};

QTEST_MAIN(TestLiveRun)
#include "TestLiveRun.moc"
