// Session files end to end: recording runs (also in parallel and interrupted), the run list,
// reading without writing a byte or leaving sidecars, the info and export verbs, timeline,
// heatmap, events and block history against what the allocator emitted.
#include <QtTest>

#include <QCryptographicHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <thread>

#include "StorageTestSupport.h"
#include "storage/formats/RmmCsvReader.h"
#include "storage/formats/SnapshotReader.h"
#include "storage/session/HeatmapQuery.h"
#include "storage/session/SessionError.h"
#include "storage/session/SessionReader.h"
#include "storage/session/StateCursor.h"
#include "storage/session/TimelineQuery.h"
#include "storage/session/TimelineSeries.h"

using namespace allocscope;
using namespace storagetest;

namespace {

QByteArray hashOf(const std::string& path) {
    return QCryptographicHash::hash(QByteArray::fromStdString(readAll(path)), QCryptographicHash::Sha256);
}

struct Cli {
    int code = -1;
    QString out;
    QString err;
};

Cli runCli(const QStringList& args) {
    QProcess p;
    p.start(qEnvironmentVariable("ALLOCSCOPE_CLI"), args);
    p.waitForFinished(120000);
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

// The four series after each event, computed from the events alone.
std::vector<storage::SeriesValues> seriesOf(const std::vector<alloc::Event>& events) {
    std::vector<storage::SeriesValues> out;
    storage::SeriesValues v;
    for (const auto& e : events) {
        v.apply(e);
        out.push_back(v);
    }
    return out;
}

// The grid's share planes against the statistics the events imply at each column: requested,
// + rounding waste = allocated, + pending free = active, + inactive = reserved (each within the
// quantisation of its cells).
// (The requested share is the asked-for part of allocated blocks only.)
void checkSharesMatchStats(const storage::HeatmapGrid& grid, const std::vector<storage::SeriesValues>& series) {
    QVERIFY(grid.rows > 0);
    QVERIFY(grid.consistent());
    const double rowBytes = static_cast<double>(grid.axisBytes) / grid.rows;
    const double tolerance = 2 * grid.rows * rowBytes / 255.0 + 1;
    using storage::HeatShare;
    for (int c = 0; c < grid.columns; ++c) {
        double sums[storage::kHeatShareCount] = {};
        for (int r = 0; r < grid.rows; ++r) {
            for (int s = 0; s < storage::kHeatShareCount; ++s) {
                sums[s] += grid.shares[static_cast<std::size_t>(s)][static_cast<std::size_t>(c * grid.rows + r)] / 255.0 * rowBytes;
            }
        }
        const double requested = sums[static_cast<int>(HeatShare::Requested)];
        const double allocated = requested + sums[static_cast<int>(HeatShare::RoundingWaste)];
        const double active = allocated + sums[static_cast<int>(HeatShare::PendingFree)];
        const double reserved = active + sums[static_cast<int>(HeatShare::Inactive)];
        const auto& v = series[grid.columnEvents[static_cast<std::size_t>(c)]];
        const QString where = QString("column %1").arg(c);
        // requested_bytes keeps a pending-free block's request until its free completes.
        QVERIFY2(requested <= static_cast<double>(v.requested) + tolerance &&
                     static_cast<double>(v.requested) <= requested + sums[static_cast<int>(HeatShare::PendingFree)] + tolerance,
                 qPrintable(where + " requested"));
        QVERIFY2(std::abs(allocated - static_cast<double>(v.allocated)) <= tolerance, qPrintable(where + " allocated"));
        QVERIFY2(std::abs(active - static_cast<double>(v.active)) <= tolerance, qPrintable(where + " active"));
        QVERIFY2(std::abs(reserved - static_cast<double>(v.reserved)) <= tolerance, qPrintable(where + " reserved"));
    }
}

}  // namespace

class TestSessionFile : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::string path_;
    RecordedRun runA_, runB_;

private slots:
    void initTestCase() {
        path_ = dir_.filePath("two-runs.allocscope").toStdString();
        storage::SessionWriter writer(path_);
        runA_ = recordProgram(&writer, randomProgram(21, 6000), "default");
        runB_ = recordProgram(&writer, randomProgram(22, 3000), "expandable");
    }

    void runsAreListedInCreationOrder() {
        QVERIFY(!sidecarsPresent(path_));
        const QByteArray before = hashOf(path_);
        {
            storage::SessionReader reader(path_);
            const auto runs = reader.runs();
            QCOMPARE(runs.size(), std::size_t(2));
            QCOMPARE(runs[0].number, 1);
            QCOMPARE(runs[1].number, 2);
            QCOMPARE(runs[0].info.name, std::string("random default"));
            QCOMPARE(runs[1].info.config, std::string("expandable"));
            QCOMPARE(runs[0].status, storage::RunStatus::Complete);
            QCOMPARE(runs[0].eventCount, runA_.events.size());
            QCOMPARE(runs[1].eventCount, runB_.events.size());
            QVERIFY(runs[0].summary.has_value());
            QVERIFY(statsDifference(runA_.finalStats, runs[0].summary->finalStats).empty());
            QVERIFY(statsDifference(runB_.finalStats, runs[1].summary->finalStats).empty());
            const auto series = seriesOf(runA_.events);
            std::int64_t peakReserved = 0;
            for (const auto& v : series) peakReserved = std::max(peakReserved, v.reserved);
            QCOMPARE(runs[0].summary->peakReserved, peakReserved);
            QVERIFY(!sidecarsPresent(path_));
        }
        QCOMPARE(hashOf(path_), before);
        QVERIFY(!sidecarsPresent(path_));
    }

    void eventsAreStoredExactly() {
        storage::SessionReader reader(path_);
        const auto page = reader.events(1, 0, runA_.events.size() + 10);
        QCOMPARE(page.events.size(), runA_.events.size());
        for (std::size_t i = 0; i < page.events.size(); ++i) {
            const auto& a = runA_.events[i];
            const auto& b = page.events[i];
            QVERIFY2(a.seq == b.seq && a.opIndex == b.opIndex && a.address == b.address && a.size == b.size &&
                         a.roundedSize == b.roundedSize && a.stream == b.stream && a.segment == b.segment &&
                         a.stackId == b.stackId && a.action == b.action && a.cause == b.cause && a.pool == b.pool,
                     qPrintable(QString("event %1 differs").arg(i)));
        }
        const auto middle = reader.events(2, 100, 50);
        QCOMPARE(middle.events.size(), std::size_t(50));
        QCOMPARE(middle.events.front().seq, std::uint64_t(100));
        QCOMPARE(middle.events.front().address, runB_.events[100].address);
    }

    void timelineIsExactForNarrowWindows() {
        storage::SessionReader reader(path_);
        const auto series = seriesOf(runA_.events);
        for (auto [first, last, buckets] : {std::tuple<std::uint64_t, std::uint64_t, int>{0, runA_.events.size() - 1, 2000},
                                            {137, 5000, 37}, {10, 12, 100}}) {
            const storage::Timeline t = storage::TimelineQuery::build(reader, 1, first, last, buckets);
            QVERIFY(t.exact);
            QCOMPARE(t.buckets.front().firstSeq, first);
            QCOMPARE(t.buckets.back().lastSeq, last);
            for (const auto& b : t.buckets) {
                std::int64_t lo = INT64_MAX, hi = INT64_MIN;
                for (std::uint64_t s = b.firstSeq; s <= b.lastSeq; ++s) {
                    lo = std::min(lo, series[s].reserved);
                    hi = std::max(hi, series[s].allocated);
                }
                QCOMPARE(b.reserved.min, lo);
                QCOMPARE(b.allocated.max, hi);
            }
        }
    }

    void timelineFromSamplesBracketsTheExactRange() {
        storage::SessionReader reader(path_);
        const auto series = seriesOf(runA_.events);
        const std::uint64_t first = 1000, last = runA_.events.size() - 1;
        const storage::Timeline t = storage::TimelineQuery::build(reader, 1, first, last, 20, 0);
        QVERIFY(!t.exact);
        QCOMPARE(t.buckets.size(), std::size_t(20));
        for (const auto& b : t.buckets) {
            std::int64_t lo = INT64_MAX, hi = INT64_MIN, wideLo = INT64_MAX, wideHi = INT64_MIN;
            for (std::uint64_t s = b.firstSeq; s <= b.lastSeq; ++s) {
                lo = std::min(lo, series[s].active);
                hi = std::max(hi, series[s].active);
            }
            // Widened to whole 64-event samples at most.
            for (std::uint64_t s = b.firstSeq - std::min<std::uint64_t>(b.firstSeq, 64); s <= std::min(b.lastSeq + 64, last); ++s) {
                wideLo = std::min(wideLo, series[s].active);
                wideHi = std::max(wideHi, series[s].active);
            }
            QVERIFY(b.active.min <= lo && b.active.min >= wideLo);
            QVERIFY(b.active.max >= hi && b.active.max <= wideHi);
        }
    }

    void heatmapMatchesTheLayout() {
        storage::SessionReader reader(path_);
        const auto series = seriesOf(runA_.events);
        auto stored = storage::HeatmapQuery::stored(reader, 1);
        QVERIFY(stored.has_value());
        QVERIFY(stored->columns > 0);
        const auto window = storage::HeatmapQuery::build(reader, 1, 200, 3000, 64, 128);
        QCOMPARE(window.columns, 64);
        QCOMPARE(window.columnEvents.back(), std::uint64_t(3000));
        // Resampled from the stored grid (replay limit 0): as many columns as asked, fewer rows.
        const auto resampled = storage::HeatmapQuery::build(reader, 1, 0, runA_.events.size() - 1, 100, 256, 0);
        QCOMPARE(resampled.columns, 100);
        QCOMPARE(resampled.rows, 256);
        QCOMPARE(resampled.axisBytes, stored->axisBytes);
        for (const storage::HeatmapGrid* grid : std::vector<const storage::HeatmapGrid*>{&*stored, &window, &resampled}) {
            checkSharesMatchStats(*grid, series);
        }
        // Run B records under expandable segments: every byte of its axis is mapped or unmapped
        // at every column, and the unmapped share is what is not reserved then.
        storage::SessionReader readerB(path_);
        const auto storedB = storage::HeatmapQuery::stored(readerB, 2);
        QVERIFY(storedB.has_value());
        checkSharesMatchStats(*storedB, seriesOf(runB_.events));
        const double rowBytes = static_cast<double>(storedB->axisBytes) / storedB->rows;
        bool sawUnmapped = false;
        for (int c = 0; c < storedB->columns; ++c) {
            double covered = 0, unmapped = 0;
            for (int r = 0; r < storedB->rows; ++r) {
                const auto cell = static_cast<std::size_t>(c * storedB->rows + r);
                for (const auto& plane : storedB->shares) covered += plane[cell] / 255.0 * rowBytes;
                unmapped += storedB->plane(storage::HeatShare::Unmapped)[cell] / 255.0 * rowBytes;
            }
            sawUnmapped = sawUnmapped || unmapped > rowBytes;
            QVERIFY2(std::abs(covered - static_cast<double>(storedB->axisBytes)) <= storedB->rows * rowBytes / 255.0 + 1,
                     qPrintable(QString("column %1: %2 of %3 bytes").arg(c).arg(covered).arg(storedB->axisBytes)));
        }
        QVERIFY(sawUnmapped);
        // Run A (no expandable segments) has no unmapped pages.
        for (std::uint8_t v : stored->plane(storage::HeatShare::Unmapped)) QCOMPARE(v, std::uint8_t(0));
    }

    void blockHistoryFindsAllocFreeAndStack() {
        storage::SessionReader reader(path_);
        // An alloc in the middle whose free completes later.
        std::size_t allocIndex = runA_.events.size() / 2;
        while (runA_.events[allocIndex].action != alloc::EventAction::Alloc || runA_.events[allocIndex].stackId == 0) ++allocIndex;
        const alloc::Event& a = runA_.events[allocIndex];
        std::optional<std::size_t> freed;
        for (std::size_t i = allocIndex + 1; i < runA_.events.size(); ++i) {
            if (runA_.events[i].address == a.address && runA_.events[i].action == alloc::EventAction::FreeCompleted) {
                freed = i;
                break;
            }
        }
        const auto history = reader.blockHistory(1, a.address + 1, allocIndex);
        QVERIFY(history.alloc.has_value());
        QCOMPARE(history.alloc->seq, std::uint64_t(allocIndex));
        QCOMPARE(history.requested, a.size);
        QCOMPARE(history.stack, sampleStacks().stack(a.stackId));
        QCOMPARE(history.freeCompleted.has_value(), freed.has_value());
        if (freed) QCOMPARE(history.freeCompleted->seq, std::uint64_t(*freed));
    }

    void infoVerb() {
        const QByteArray before = hashOf(path_);
        Cli text = runCli({"info", QString::fromStdString(path_)});
        QCOMPARE(text.code, 0);
        QVERIFY(text.out.contains("run 2: random expandable [complete]"));
        Cli json = runCli({"info", QString::fromStdString(path_), "--json"});
        QCOMPARE(json.code, 0);
        const QJsonObject doc = QJsonDocument::fromJson(json.out.toUtf8()).object();
        const QJsonArray runs = doc["runs"].toArray();
        QCOMPARE(runs.size(), 2);
        QCOMPARE(runs[0].toObject()["events"].toInteger(), qint64(runA_.events.size()));
        QCOMPARE(runs[1].toObject()["summary"].toObject()["final_stats"].toObject()["num_device_alloc"].toInteger(),
                 qint64(runB_.finalStats.num_device_alloc));
        QCOMPARE(hashOf(path_), before);
        QVERIFY(!sidecarsPresent(path_));
        QCOMPARE(runCli({"info"}).code, 2);
        Cli missing = runCli({"info", "no-such.allocscope"});
        QCOMPARE(missing.code, 1);
        QCOMPARE(missing.err, QString("allocscope-cli: no such session file (no-such.allocscope)\n"));
    }

    void exportVerb() {
        const QString db = QString::fromStdString(path_);
        const QString csv = dir_.filePath("events.csv");
        QCOMPARE(runCli({"export", "--db", db, "--run", "1", "--events-csv", csv, "--from", "10", "--to", "19"}).code, 0);
        const QStringList lines = QString::fromStdString(readAll(csv.toStdString())).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 11);
        QVERIFY(lines[0].startsWith("seq,op_index,action,cause"));
        const auto& e = runA_.events[10];
        QVERIFY(lines[1].startsWith(QString("10,%1,%2,").arg(e.opIndex).arg(QString::fromStdString(std::string(alloc::actionName(e.action))))));

        const QString pickle = dir_.filePath("run2.pickle");
        QCOMPARE(runCli({"export", "--db", db, "--run", "2", "--pickle", pickle}).code, 0);
        const formats::Snapshot snap = formats::SnapshotReader::readFile(pickle.toStdString());
        QCOMPARE(snap.segments.size(), runB_.finalSegments.size());
        QCOMPARE(snap.device_traces.at(0).size(), runB_.events.size());

        const QString rmm = dir_.filePath("run1.csv");
        QCOMPARE(runCli({"export", "--db", db, "--run", "1", "--csv", rmm}).code, 0);
        std::size_t expected = 0;
        for (const auto& ev : runA_.events) {
            expected += ev.action == alloc::EventAction::Alloc || ev.action == alloc::EventAction::FreeRequested ||
                        ev.action == alloc::EventAction::Oom;
        }
        const formats::RmmLog log = formats::RmmCsvReader::read(readAll(rmm.toStdString()));
        QCOMPARE(log.records.size(), expected);

        Cli noRun = runCli({"export", "--db", db, "--run", "7", "--events-csv", csv});
        QCOMPARE(noRun.code, 1);
        QVERIFY(noRun.err.startsWith("allocscope-cli: no run 7"));
        QCOMPARE(runCli({"export", "--db", db, "--events-csv", csv}).code, 2);
        QVERIFY(!sidecarsPresent(path_));
    }

    void importVerbRecordsTheReplay() {
        const QString data = qEnvironmentVariable("ALLOCSCOPE_TEST_DATA") + "/traces/";
        const QString pickle = dir_.filePath("frag101__default.pickle");
        QVERIFY(QFile::copy(data + "frag101__default.pickle", pickle));
        const std::string pickleBytes = readAll(pickle.toStdString());
        const QString db = dir_.filePath("imported.allocscope");
        Cli first = runCli({"import", pickle, "--db", db});
        QCOMPARE(first.code, 0);
        QCOMPARE(first.out, QString("run 1\n"));
        QCOMPARE(readAll(pickle.toStdString()), pickleBytes);
        QVERIFY(!sidecarsPresent(pickle.toStdString()));
        QVERIFY(!sidecarsPresent(db.toStdString()));
        Cli second = runCli({"import", data + "frag101__default.csv", "--db", db});
        QCOMPARE(second.code, 0);
        QCOMPARE(second.out, QString("run 2\n"));

        // The recorded replay ends with PyTorch's own memory_stats, every key.
        QFile truthFile(data + "frag101__default.json");
        QVERIFY(truthFile.open(QIODevice::ReadOnly));
        const QJsonObject truth = QJsonDocument::fromJson(truthFile.readAll()).object()["memory_stats"].toObject();
        Cli info = runCli({"info", db, "--json"});
        QCOMPARE(info.code, 0);
        const QJsonArray runs = QJsonDocument::fromJson(info.out.toUtf8()).object()["runs"].toArray();
        QCOMPARE(runs.size(), 2);
        QCOMPARE(runs[0].toObject()["source_kind"].toString(), QString("snapshot"));
        QCOMPARE(runs[1].toObject()["source_kind"].toString(), QString("csv"));
        QCOMPARE(runs[0].toObject()["status"].toString(), QString("complete"));
        // The import compared itself with the recording: info says so, in JSON and in text.
        QCOMPARE(runs[0].toObject()["verdict"].toString(), QString("exact"));
        QCOMPARE(runs[0].toObject()["verdict_text"].toString(), QString("exact"));
        QVERIFY(runCli({"info", db}).out.contains("run 1: frag101__default.pickle [complete]\n"));
        QVERIFY(runCli({"info", db}).out.contains("  verdict: exact\n"));
        const QJsonObject stats = runs[0].toObject()["summary"].toObject()["final_stats"].toObject();
        QCOMPARE(stats.size(), 122);
        for (auto it = truth.begin(); it != truth.end(); ++it) {
            QVERIFY2(stats[it.key()].toInteger() == it.value().toInteger(), qPrintable(it.key()));
        }
        // And the state at the last event is PyTorch's final layout (the replay checks it too).
        storage::SessionReader reader(db.toStdString());
        QVERIFY(reader.run(1).divergence.empty());
        QCOMPARE(runCli({"import", "missing.pickle", "--db", db}).code, 1);
        QCOMPARE(runCli({"import", pickle}).code, 2);
    }

    void parallelRunsShareOneWriter() {
        const std::string path = dir_.filePath("parallel.allocscope").toStdString();
        RecordedRun a, b;
        {
            storage::SessionWriter writer(path);
            std::thread t1([&] { a = recordProgram(&writer, randomProgram(31, 3000), "default"); });
            std::thread t2([&] { b = recordProgram(&writer, randomProgram(32, 3000), "split"); });
            t1.join();
            t2.join();
        }
        storage::SessionReader reader(path);
        QCOMPARE(reader.runs().size(), std::size_t(2));
        for (const RecordedRun* run : {&a, &b}) {
            const auto row = reader.run(run->runNumber);
            QCOMPARE(row.status, storage::RunStatus::Complete);
            QCOMPARE(row.eventCount, run->events.size());
            storage::StateCursor cursor(reader, run->runNumber);
            const auto last = cursor.load(run->events.size() - 1);
            QVERIFY(layoutDifference(run->finalSegments, last.segments).empty());
        }
    }

    void unfinishedRecordingIsInterrupted() {
        const std::string path = dir_.filePath("unfinished.allocscope").toStdString();
        std::size_t recorded = 0;
        {
            storage::SessionWriter writer(path);
            alloc::SimulatedDevice device(2ull << 30, 0);
            storage::RecorderOptions options;
            options.batchEvents = 100;
            storage::SessionRecorder recorder(writer, {}, alloc::DeviceStats{}, options);
            alloc::CachingAllocator allocator(alloc::AllocatorConfig{}, device, &recorder);
            for (int i = 0; i < 250; ++i) allocator.malloc(1000 + static_cast<std::uint64_t>(i), 0);
            recorded = recorder.eventCount();
        }  // destroyed without finish()
        storage::SessionReader reader(path);
        const auto row = reader.run(1);
        QCOMPARE(row.status, storage::RunStatus::Interrupted);
        QCOMPARE(row.eventCount, recorded);
        QVERIFY(!row.summary.has_value());
    }
};

QTEST_GUILESS_MAIN(TestSessionFile)
#include "TestSessionFile.moc"
