// Importing a distributed job's per-rank snapshots into one session (issue #17): N copies of a
// real trace named rank0..rank{N-1}, imported by storage::BatchImport (what `allocscope-cli import
// FILE... --jobs J` runs) with each --jobs value in turn, each into a fresh session. Reports wall
// and CPU time, runs per second and the speed-up over the first jobs value, and checks that
// every file landed as one exact run numbered in file order.
//
//   bench_storage_batch_import [--files N] [--jobs 1,2] [--repeat R] [--source TRACE] [--dir DIR]
//   bench_storage_batch_import --smoke          (4 copies of frag101, jobs 1 and 2, no claims)
// The default source is train_gpt__default.pickle (0.7 MB, PyTorch's, replays exactly).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "storage/session/BatchImport.h"
#include "storage/session/SessionReader.h"
#include "storage/session/SessionWriter.h"

using namespace allocscope;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

namespace {

double cpuSeconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

std::string envOr(const char* name, const std::string& fallback) {
    const char* value = std::getenv(name);
    return value != nullptr && *value != '\0' ? std::string(value) : fallback;
}

int fail(const std::string& what) {
    std::fprintf(stderr, "bench_storage_batch_import: %s\n", what.c_str());
    return 1;
}

struct Measured {
    double wall = 0;
    double cpu = 0;
};

// One import of every file into a new session; "" or what went wrong.
std::string importOnce(const std::vector<std::string>& files, const fs::path& session, unsigned jobs, Measured& m) {
    storage::BatchImportOptions options;
    options.jobs = jobs;
    const double cpuStart = cpuSeconds();
    const auto start = Clock::now();
    std::vector<storage::BatchFileResult> results;
    {
        std::unique_ptr<storage::SessionWriter> writer;
        results = storage::BatchImport::run(
            [&]() -> storage::SessionWriter& {
                writer = std::make_unique<storage::SessionWriter>(session.string());
                return *writer;
            },
            files, options);
    }  // closed: committed and checkpointed
    m.wall = std::chrono::duration<double>(Clock::now() - start).count();
    m.cpu = cpuSeconds() - cpuStart;
    for (std::size_t i = 0; i < results.size(); ++i) {
        const storage::BatchFileResult& r = results[i];
        if (!r.error.empty()) return r.error;
        if (r.runs.size() != 1 || r.runs[0].runNumber != static_cast<int>(i) + 1) return r.file + ": not run " + std::to_string(i + 1);
        if (!r.runs[0].divergence.empty()) return r.file + " diverged: " + r.runs[0].divergence;
    }
    const std::vector<storage::RunRow> runs = storage::SessionReader(session.string(), false).runs();
    if (runs.size() != files.size()) return "the session holds " + std::to_string(runs.size()) + " runs";
    for (std::size_t i = 0; i < runs.size(); ++i) {
        if (!runs[i].rank || runs[i].rank->rank != static_cast<int>(i)) return "run " + std::to_string(i + 1) + " has the wrong rank";
    }
    return "";
}

}  // namespace

int main(int argc, char** argv) {
    std::size_t fileCount = 64;
    std::vector<unsigned> jobsList{1, 2};
    int repeat = 1;
    bool smoke = false, sourceGiven = false;
    std::string dirArg;
    std::string source = envOr("ALLOCSCOPE_TEST_DATA", "tests/data") + "/traces/train_gpt__default.pickle";
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const bool hasValue = i + 1 < argc;
        if (a == "--smoke") {
            smoke = true;
        } else if (a == "--files" && hasValue) {
            fileCount = static_cast<std::size_t>(std::atol(argv[++i]));
        } else if (a == "--repeat" && hasValue) {
            repeat = std::atoi(argv[++i]);
        } else if (a == "--source" && hasValue) {
            source = argv[++i];
            sourceGiven = true;
        } else if (a == "--dir" && hasValue) {
            dirArg = argv[++i];
        } else if (a == "--jobs" && hasValue) {
            jobsList.clear();
            std::stringstream list(argv[++i]);
            for (std::string item; std::getline(list, item, ',');) jobsList.push_back(static_cast<unsigned>(std::atoi(item.c_str())));
        } else {
            return fail("usage: bench_storage_batch_import [--files N] [--jobs 1,2] [--repeat R] [--source TRACE] [--dir DIR] [--smoke]");
        }
    }
    if (smoke) {  // seconds under the sanitizers: frag101's small trace unless one was named
        fileCount = 4;
        repeat = 1;
        if (!sourceGiven) source = envOr("ALLOCSCOPE_TEST_DATA", "tests/data") + "/traces/frag101__default.pickle";
    }
    if (fileCount == 0 || fileCount > 100000 || repeat < 1 || jobsList.empty() ||
        std::any_of(jobsList.begin(), jobsList.end(), [](unsigned j) { return j == 0 || j > 1024; })) {
        return fail("--files, --repeat and every --jobs value must be positive");
    }

    std::error_code ec;
    const fs::path dir = dirArg.empty() ? fs::temp_directory_path() / ("allocscope-bench-batch-" + std::to_string(getpid())) : fs::path(dirArg);
    fs::create_directories(dir, ec);
    if (ec) return fail("cannot create " + dir.string() + ": " + ec.message());
    std::vector<std::string> files;
    for (std::size_t r = 0; r < fileCount; ++r) {
        const fs::path to = dir / ("job_rank" + std::to_string(r) + fs::path(source).extension().string());
        fs::copy_file(source, to, fs::copy_options::overwrite_existing, ec);
        if (ec) return fail("cannot copy " + source + " to " + to.string() + ": " + ec.message());
        files.push_back(to.string());
    }
    auto cleanup = [&] {
        for (const std::string& f : files) fs::remove(f, ec);
        for (const unsigned jobs : jobsList) fs::remove(dir / ("jobs" + std::to_string(jobs) + ".allocscope"), ec);
        if (dirArg.empty()) fs::remove(dir, ec);
    };

    std::printf("%zu copies of %s (%.1f KB each), %d repeat(s), best wall time of each\n", fileCount, fs::path(source).filename().c_str(),
                static_cast<double>(fs::file_size(source, ec)) / 1024.0, repeat);
    double baseline = 0;
    for (const unsigned jobs : jobsList) {
        Measured best;
        best.wall = 1e300;
        for (int k = 0; k < repeat; ++k) {
            const fs::path session = dir / ("jobs" + std::to_string(jobs) + ".allocscope");
            fs::remove(session, ec);
            Measured m;
            const std::string problem = importOnce(files, session, jobs, m);
            if (!problem.empty()) {
                cleanup();
                return fail(problem);
            }
            if (m.wall < best.wall) best = m;
        }
        if (baseline == 0) baseline = best.wall;
        std::printf("--jobs %u: %.2f s wall, %.2f s CPU, %.1f files/s, x%.2f against --jobs %u\n", jobs, best.wall, best.cpu,
                    static_cast<double>(fileCount) / best.wall, baseline / best.wall, jobsList.front());
    }
    if (smoke) std::printf("smoke run: no claims\n");
    cleanup();
    return 0;
}
