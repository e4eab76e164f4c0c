// Snapshot reading speed: (1) the largest shared PyTorch pickle, (2) a synthetic trace of
// 1,000,000 entries written by PickleWriter. Reports MB/s and entries/s for the pickle VM alone
// (bytes -> PyTree), the conversion (PyTree -> Snapshot) and both together, best of a few runs.
//
// Usage: bench_formats_read [--smoke] [--entries N] [--data DIR]
//   --smoke   a 1,000-entry trace and one pass: checks that it runs, makes no timing claim.
// DIR defaults to $ALLOCSCOPE_TEST_DATA, else the tests/data folder beside this source.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "storage/formats/FileBytes.h"
#include "storage/formats/FormatError.h"
#include "storage/formats/PickleReader.h"
#include "storage/formats/PickleWriter.h"
#include "storage/formats/SnapshotReader.h"

using namespace allocscope::formats;
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

size_t entryCount(const Snapshot& s) {
    size_t n = 0;
    for (const auto& d : s.device_traces) n += d.size();
    return n;
}

// Times bytes -> tree, tree -> Snapshot, and the whole read; prints the best of `passes`.
void measure(const char* label, const std::string& bytes, int passes) {
    double bestVm = 1e300, bestConvert = 1e300, bestTotal = 1e300;
    size_t entries = 0, nodes = 0;
    for (int p = 0; p < passes; ++p) {
        const auto t0 = Clock::now();
        const PyTree tree = PickleReader::read(bytes);
        const auto t1 = Clock::now();
        const Snapshot snap = SnapshotReader::fromTree(tree);
        const auto t2 = Clock::now();
        bestVm = std::min(bestVm, seconds(t0, t1));
        bestConvert = std::min(bestConvert, seconds(t1, t2));
        bestTotal = std::min(bestTotal, seconds(t0, t2));
        entries = entryCount(snap);
        nodes = tree.size();
    }
    const double mb = static_cast<double>(bytes.size()) / 1e6;
    std::printf("%s: %.2f MB, %zu trace entries, %zu values\n", label, mb, entries, nodes);
    std::printf("  pickle VM (bytes -> PyTree):    %8.1f ms  %8.1f MB/s  %12.0f entries/s\n", bestVm * 1e3,
                mb / bestVm, static_cast<double>(entries) / bestVm);
    std::printf("  convert (PyTree -> Snapshot):   %8.1f ms\n", bestConvert * 1e3);
    std::printf("  read total (bytes -> Snapshot): %8.1f ms  %8.1f MB/s  %12.0f entries/s\n", bestTotal * 1e3,
                mb / bestTotal, static_cast<double>(entries) / bestTotal);
}

// A trace shaped like train_gpt's: alloc / free_requested / free_completed triples, most events
// without frames and the rest sharing a few dozen stacks; 47-bit addresses and 51-bit times.
Snapshot synthetic(size_t entries) {
    Snapshot s;
    std::vector<std::vector<SnapshotFrame>> stacks(40);
    for (size_t k = 0; k < stacks.size(); ++k) {
        for (size_t f = 0; f < 2 + k % 12; ++f) {
            stacks[k].push_back({"model_" + std::to_string(f % 5) + ".py", static_cast<int64_t>(10 + 7 * f + k),
                                 "forward_" + std::to_string((k + f) % 9)});
        }
    }
    s.device_traces.resize(1);
    std::vector<TraceEntry>& t = s.device_traces[0];
    t.reserve(entries);
    uint64_t lcg = 12345;
    for (size_t i = 0; i < entries; ++i) {
        lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
        TraceEntry e;
        static const char* const actions[] = {"alloc", "free_requested", "free_completed"};
        e.action = actions[i % 3];
        e.addr = 0x7f0000000000ull + ((lcg >> 20) % (1ull << 34)) * 512;
        e.has_addr = true;
        e.size = 512 + (lcg >> 40) % (64ull << 20);
        e.time_us = 1795317673655681ll + static_cast<int64_t>(i) * 3;
        e.compile_context = "N/A";
        if ((lcg >> 8) % 10 < 4) e.frames = stacks[(lcg >> 12) % stacks.size()];
        t.push_back(std::move(e));
    }
    SnapshotSegment seg;
    seg.address = 0x7f0000000000ull;
    seg.total_size = 2u << 20;
    seg.segment_type = "large";
    seg.blocks.push_back({seg.address, seg.total_size, 0, "inactive", {}});
    s.segments.push_back(seg);
    s.allocator_settings.present = true;
    s.allocator_settings.conf = "";
    s.allocator_settings.max_split_size = -1;
    return s;
}

fs::path dataDir(const char* arg) {
    if (arg) return arg;
    if (const char* env = std::getenv("ALLOCSCOPE_TEST_DATA")) return env;
    return fs::path(__FILE__).parent_path().parent_path() / "data";
}

}  // namespace

int main(int argc, char** argv) {
    bool smoke = false;
    size_t entries = 1000000;
    const char* data = nullptr;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--smoke") == 0) smoke = true;
        else if (std::strcmp(argv[i], "--entries") == 0 && i + 1 < argc) entries = std::strtoull(argv[++i], nullptr, 10);
        else if (std::strcmp(argv[i], "--data") == 0 && i + 1 < argc) data = argv[++i];
        else {
            std::fprintf(stderr, "usage: %s [--smoke] [--entries N] [--data DIR]\n", argv[0]);
            return 2;
        }
    }
    if (smoke) entries = 1000;
    const int passes = smoke ? 1 : 5;
    try {
        // (1) The largest shared pickle.
        const fs::path traces = dataDir(data) / "traces";
        fs::path largest;
        std::error_code ec;
        for (const auto& entry : fs::directory_iterator(traces, ec)) {
            if (entry.path().extension() != ".pickle") continue;
            if (largest.empty() || fs::file_size(entry.path()) > fs::file_size(largest)) largest = entry.path();
        }
        if (largest.empty()) {
            std::printf("no shared pickles under %s: skipping the real-file measurement\n", traces.string().c_str());
        } else {
            measure(("real " + largest.filename().string()).c_str(), FileBytes::read(largest.string()), passes);
        }

        // (2) Synthetic trace: write it once (timed), then read it.
        std::string bytes;
        {
            const Snapshot snap = synthetic(entries);
            const auto t0 = Clock::now();
            bytes = PickleWriter::write(snap);
            const auto t1 = Clock::now();
            std::printf("synthetic: PickleWriter wrote %zu entries, %.2f MB in %.1f ms (%.1f MB/s)\n", entries,
                        static_cast<double>(bytes.size()) / 1e6, seconds(t0, t1) * 1e3,
                        static_cast<double>(bytes.size()) / 1e6 / seconds(t0, t1));
        }
        measure("synthetic", bytes, passes);
        if (entryCount(SnapshotReader::read(bytes)) != entries) {
            std::fprintf(stderr, "synthetic trace read back with the wrong number of entries\n");
            return 1;
        }
    } catch (const FormatError& e) {
        std::fprintf(stderr, "bench_formats_read: %s\n", e.what());
        return 1;
    }
    if (smoke) std::printf("(smoke run: sizes are tiny and timings mean nothing)\n");
    return 0;
}
