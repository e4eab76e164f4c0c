// Many snapshots into one session (a distributed job's per-rank snapshots): the rank rule, runs
// numbered in the order the files were given whatever order the workers finish in, a bad file
// reported by name while the others land, ranks stored (and absent in sessions without them),
// cancel, and the ranks overview's median and outliers.
#include <QtTest>

#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

#include "storage/formats/PickleWriter.h"
#include "storage/formats/SnapshotReader.h"
#include "storage/import/RankRule.h"
#include "storage/session/BatchImport.h"
#include "storage/session/RankOverview.h"
#include "storage/session/SessionReader.h"

using namespace allocscope;
namespace fs = std::filesystem;

namespace {

std::string replayTrace(const std::string& name) {
    return qgetenv("ALLOCSCOPE_TEST_DATA").toStdString() + "/replay/" + name + ".pickle";
}

// The job: small real traces (torch 2.11, H100) under rank names. Imported under a memory
// fraction of 0.001 (their recording's), oom_ending ends in an OOM and gc_fraction peaks at
// 62 MiB against the others' 32 MiB (20 MiB for the streams trace).
struct Job {
    QTemporaryDir dir;
    std::vector<std::string> files;

    void add(const std::string& source, const std::string& name) {
        const fs::path to = fs::path(dir.path().toStdString()) / name;
        fs::copy_file(replayTrace(source), to);
        files.push_back(to.string());
    }
    void addBytes(const std::string& bytes, const std::string& name) {
        const fs::path to = fs::path(dir.path().toStdString()) / name;
        std::FILE* f = std::fopen(to.c_str(), "wb");
        std::fwrite(bytes.data(), 1, bytes.size(), f);
        std::fclose(f);
        files.push_back(to.string());
    }
    std::string session(const std::string& name) const { return dir.filePath(QString::fromStdString(name)).toStdString(); }
};

storage::BatchImportOptions options(unsigned jobs) {
    storage::BatchImportOptions o;
    o.target.memoryFraction = 0.001;
    o.jobs = jobs;
    return o;
}

std::vector<storage::BatchFileResult> importAll(const std::string& session, const std::vector<std::string>& files,
                                                const storage::BatchImportOptions& o) {
    std::unique_ptr<storage::SessionWriter> writer;
    auto results = storage::BatchImport::run(
        [&]() -> storage::SessionWriter& {
            writer = std::make_unique<storage::SessionWriter>(session);
            return *writer;
        },
        files, o);
    return results;
}

}  // namespace

class TestBatchImport : public QObject {
    Q_OBJECT
private slots:
    void rankFromFileName_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("rank");  // -1: none
        QTest::newRow("rank3") << "snap_rank3.pickle" << 3;
        QTest::newRow("rank_3") << "/a/b/rank_3.pickle" << 3;
        QTest::newRow("RANK-03") << "job-RANK-03.json" << 3;
        QTest::newRow("dots") << "trace.rank.7.pickle" << 7;
        QTest::newRow("_r3_") << "run_r3_final.pickle" << 3;
        QTest::newRow("-r12.") << "snap-r12.pickle" << 12;
        QTest::newRow("r5 at start") << "r5.pickle" << 5;
        QTest::newRow("directory not used") << "/rank4/snap.pickle" << -1;
        QTest::newRow("word with r") << "trainer3.pickle" << -1;
        QTest::newRow("ranks3") << "ranks3.pickle" << -1;
        QTest::newRow("frank3") << "frank3.pickle" << -1;
        QTest::newRow("r3x") << "snap_r3x.pickle" << -1;
        QTest::newRow("too long") << "rank1234567890.pickle" << -1;
        QTest::newRow("none") << "frag101__default.pickle" << -1;
    }
    void rankFromFileName() {
        QFETCH(QString, name);
        QFETCH(int, rank);
        const std::optional<int> got = storage::RankRule::fromFileName(name.toStdString());
        QCOMPARE(got.value_or(-1), rank);
    }

    void rankFromMetadata_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<int>("rank");
        QTest::newRow("rank=3") << "rank=3" << 3;
        QTest::newRow("json") << "{\"rank\": 12, \"step\": 4}" << 12;
        QTest::newRow("global_rank") << "global_rank 5" << 5;
        QTest::newRow("Rank:") << "node a Rank: 2" << 2;
        QTest::newRow("none") << "step=3" << -1;
        QTest::newRow("cranky") << "cranky=3" << -1;
    }
    void rankFromMetadata() {
        QFETCH(QString, text);
        QFETCH(int, rank);
        QCOMPARE(storage::RankRule::fromMetadata(text.toStdString()).value_or(-1), rank);
    }

    // The metadata wins over the name; the name serves when no metadata carries a rank.
    void metadataBeforeName() {
        const auto found = storage::RankRule::find("rank1.pickle", {"step 2", "rank=7"});
        QVERIFY(found && found->rank == 7 && found->fromMetadata);
        const auto byName = storage::RankRule::find("rank1.pickle", {"step 2"});
        QVERIFY(byName && byName->rank == 1 && !byName->fromMetadata);
    }

    // Runs follow the order the files were given with 1 and with 3 workers, the bad file is
    // named and creates no run, the others land with their ranks, and the overview flags the OOM
    // rank and the one whose peak reserved is far above the median.
    void importsInGivenOrder() {
        Job job;
        job.add("gc_fraction", "job_rank5.pickle");  // the largest first: it finishes late
        job.add("repeated_empty_cache", "job_rank0.pickle");
        job.add("repeated_empty_cache", "job_rank_1.pickle");
        job.addBytes("\x80\x04garbage", "job_rank7.pickle");
        job.add("repeated_empty_cache", "job-r2.pickle");
        job.add("repeated_empty_cache", "job.rank-03.pickle");
        job.add("streams_record_stream", "job_rank4.pickle");
        job.add("oom_ending", "job_rank6.pickle");
        // A rank only user_metadata carries.
        formats::Snapshot snapshot = formats::SnapshotReader::readFile(replayTrace("repeated_empty_cache"));
        for (auto& device : snapshot.device_traces) {
            for (auto& entry : device) entry.user_metadata = "{\"rank\": 8}";
        }
        job.addBytes(formats::PickleWriter::write(snapshot), "meta.pickle");

        std::vector<std::string> names[2];
        for (const unsigned jobs : {1u, 3u}) {
            const std::string session = job.session("s" + std::to_string(jobs) + ".allocscope");
            const auto results = importAll(session, job.files, options(jobs));
            QCOMPARE(results.size(), job.files.size());
            int expected = 1;
            for (std::size_t i = 0; i < results.size(); ++i) {
                QCOMPARE(results[i].file, job.files[i]);
                if (i == 3) {
                    QVERIFY(results[i].runs.empty());
                    QVERIFY2(results[i].error.find("job_rank7.pickle") != std::string::npos, results[i].error.c_str());
                    continue;
                }
                QVERIFY2(results[i].error.empty(), results[i].error.c_str());
                QCOMPARE(results[i].runs.size(), std::size_t{1});
                QCOMPARE(results[i].runs[0].runNumber, expected++);
            }
            storage::SessionReader reader(session);
            const std::vector<storage::RunRow> runs = reader.runs();
            QCOMPARE(runs.size(), std::size_t{8});
            for (const storage::RunRow& run : runs) {
                names[jobs == 1 ? 0 : 1].push_back(run.info.name);
                QVERIFY(run.rank.has_value());
            }
            QCOMPARE(runs[0].rank->rank, 5);
            QCOMPARE(runs[0].rank->source, std::string("file name"));
            QCOMPARE(runs[3].rank->rank, 2);
            QCOMPARE(runs[7].rank->rank, 8);
            QCOMPARE(runs[7].rank->source, std::string("user_metadata"));
            QCOMPARE(runs[7].info.name, std::string("meta.pickle · rank 8"));

            const storage::RankOverviewData overview = storage::RankOverview::build(runs);
            QCOMPARE(overview.medianPeakReserved, std::int64_t{32} << 20);
            QCOMPARE(overview.rows.front().rank->rank, 0);  // ordered by rank
            for (const storage::RankRow& row : overview.rows) {
                const int rank = row.rank->rank;
                QVERIFY(row.complete);
                QCOMPARE(row.oomOutlier, rank == 6);
                QCOMPARE(row.reservedOutlier, rank == 5 || rank == 6);  // 62 and 50 MiB against 32
                // At the peak's moment with the most allocated, not at its segment_alloc (allocated 0).
                if (rank == 6) QCOMPARE(row.fragmentationAtPeak, 0.0);    // 50 of 50 MiB
                if (rank == 4) QCOMPARE(row.fragmentationAtPeak, 0.4);    // 12 of 20 MiB
            }
            // A threshold above the largest share flags only the OOM.
            for (const storage::RankRow& row : storage::RankOverview::build(runs, 1.0).rows) {
                QCOMPARE(row.outlier(), row.rank->rank == 6);
            }
        }
        QCOMPARE(names[1], names[0]);
    }

    // A session without ranked runs has no run_rank table and reads every run as "no rank", as
    // older sessions do.
    void noRankNoTable() {
        Job job;
        job.add("repeated_empty_cache", "plain.pickle");
        const std::string session = job.session("plain.allocscope");
        importAll(session, job.files, options(2));
        storage::SessionReader reader(session);
        QVERIFY(!reader.db().hasTable("run_rank"));
        QVERIFY(!reader.runs().front().rank.has_value());
        QVERIFY(!reader.run(1).rank.has_value());
    }

    // Only bad files: the session is never asked for, so it is not created.
    void badFilesCreateNoSession() {
        Job job;
        job.addBytes("", "rank0.pickle");
        job.addBytes("not,a,csv\n", "rank1.csv");
        const std::string session = job.session("none.allocscope");
        const auto results = importAll(session, job.files, options(2));
        QVERIFY(!fs::exists(session));
        QVERIFY(results[0].error.find("rank0.pickle") != std::string::npos);
        QVERIFY(results[1].error.find("rank1.csv") != std::string::npos);
    }

    // Cancel at the first progress report: what was created is kept (complete or interrupted),
    // files not started have no runs, and the session opens.
    void cancelKeepsWhatWasDone() {
        Job job;
        for (int r = 0; r < 6; ++r) job.add("repeated_empty_cache", "rank" + std::to_string(r) + ".pickle");
        const std::string session = job.session("cancel.allocscope");
        storage::BatchImportOptions o = options(2);
        std::atomic<int> calls{0};
        o.progress = [&](std::uint64_t, std::uint64_t total) {
            if (total != 6000) qFatal("progress total is not 1000 per file");
            return calls.fetch_add(1) < 1;
        };
        const auto results = importAll(session, job.files, o);
        std::size_t runs = 0;
        for (const auto& r : results) {
            if (!r.started) QVERIFY(r.runs.empty());
            runs += r.runs.size();
        }
        QVERIFY(runs < job.files.size());
        if (fs::exists(session)) QCOMPARE(storage::SessionReader(session).runs().size(), runs);
    }
};

QTEST_GUILESS_MAIN(TestBatchImport)
#include "TestBatchImport.moc"
