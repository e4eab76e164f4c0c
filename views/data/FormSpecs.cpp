#include "views/data/FormSpecs.h"

namespace allocscope::views {

namespace {
ConfigFieldSpec boolField(const char* key, const char* label, const char* group, const char* help) {
    ConfigFieldSpec f;
    f.key = QString::fromLatin1(key);
    f.label = QString::fromLatin1(label);
    f.group = QString::fromLatin1(group);
    f.help = QString::fromLatin1(help);
    f.kind = FieldKind::Bool;
    f.defaultValue = false;
    return f;
}
ConfigFieldSpec intField(const char* key, const char* label, const char* group, const char* help, qlonglong min,
                         qlonglong max, qlonglong def, const char* suffix, const char* unsetText = "") {
    ConfigFieldSpec f;
    f.key = QString::fromLatin1(key);
    f.label = QString::fromLatin1(label);
    f.group = QString::fromLatin1(group);
    f.help = QString::fromLatin1(help);
    f.kind = FieldKind::Int;
    f.minimum = static_cast<double>(min);
    f.maximum = static_cast<double>(max);
    f.defaultValue = def;
    f.suffix = QString::fromLatin1(suffix);
    f.unsetText = QString::fromLatin1(unsetText);
    return f;
}
}  // namespace

std::vector<ConfigFieldSpec> pytorchConfigFieldSpecs() {
    const char* device = "Device allocator";
    const char* pinned = "Pinned host memory";
    std::vector<ConfigFieldSpec> specs;

    ConfigFieldSpec backend;
    backend.key = QStringLiteral("backend");
    backend.label = QStringLiteral("Backend");
    backend.group = QString::fromLatin1(device);
    backend.help = QStringLiteral(
        "native: PyTorch's caching allocator (segments, blocks, pools).\n"
        "cudaMallocAsync: CUDA's stream-ordered allocator; most other options are ignored.");
    backend.kind = FieldKind::Choice;
    backend.choices = {QStringLiteral("native"), QStringLiteral("cudaMallocAsync")};
    backend.defaultValue = QStringLiteral("native");
    specs.push_back(backend);

    specs.push_back(intField("max_split_size_mb", "Max split size", device,
                             "Blocks of at least this size are never split (\"oversize\") and are reused only by\n"
                             "requests close to their size. Must be larger than the large segment size.\n"
                             "Unset (unlimited) by default.",
                             0, 1 << 24, 0, " MiB", "unlimited"));
    specs.push_back(intField("max_non_split_rounding_mb", "Max non-split rounding", device,
                             "An oversize cached block serves a request only if it is at most this much\n"
                             "larger. Defaults to the large segment size (20 MiB).",
                             0, 1 << 24, 0, " MiB", "default"));
    specs.push_back(intField("large_segment_size_mb", "Large segment size", device,
                             "Size of the segment cudaMalloc'ed for large-pool requests below 10 MiB, and the\n"
                             "page size of large expandable segments. 20 MiB by default.",
                             0, 1 << 20, 0, " MiB", "default (20 MiB)"));

    ConfigFieldSpec roundup;
    roundup.key = QStringLiteral("roundup_power2_divisions");
    roundup.label = QStringLiteral("Round-up power-of-2 divisions");
    roundup.group = QString::fromLatin1(device);
    roundup.help = QStringLiteral(
        "Rounds request sizes up to one of N steps between two powers of two, per size interval\n"
        "(< 2 MiB, [2, 4) MiB, ..., >= 32 GiB). 0 = no power-of-two rounding in that interval.");
    roundup.kind = FieldKind::Divisions;
    QVariantList zeros;
    for (int i = 0; i < 16; ++i) zeros.push_back(0);
    roundup.defaultValue = zeros;
    specs.push_back(roundup);

    ConfigFieldSpec gc;
    gc.key = QStringLiteral("garbage_collection_threshold");
    gc.label = QStringLiteral("Garbage collection threshold");
    gc.group = QString::fromLatin1(device);
    gc.help = QStringLiteral(
        "When reserved memory exceeds this fraction of the allowed memory, cached blocks that were\n"
        "unused longest are released before cudaMalloc. Needs a memory fraction to matter. 0 = off.");
    gc.kind = FieldKind::Double;
    gc.minimum = 0.0;
    gc.maximum = 0.99;
    gc.step = 0.05;
    gc.decimals = 2;
    gc.defaultValue = 0.0;
    gc.unsetText = QStringLiteral("off");
    specs.push_back(gc);

    specs.push_back(boolField("expandable_segments", "Expandable segments", device,
                              "Reserve a large virtual range per stream and pool and map physical pages into it\n"
                              "on demand, so one segment grows instead of many being cudaMalloc'ed."));
    specs.push_back(boolField("release_lock_on_cudamalloc", "Release lock on cudaMalloc", device,
                              "Drop the allocator mutex around cudaMalloc calls (concurrency only, no effect\n"
                              "on the layout)."));
    specs.push_back(boolField("graph_capture_record_stream_reuse", "Graph capture record-stream reuse", device,
                              "During CUDA graph capture, allow reuse of blocks with recorded streams once the\n"
                              "capture's dependencies show they are done."));

    ConfigFieldSpec fraction;
    fraction.key = QStringLiteral("per_process_memory_fraction");
    fraction.label = QStringLiteral("Per-process memory fraction");
    fraction.group = QString::fromLatin1(device);
    fraction.help = QStringLiteral(
        "Cap on the memory this process may reserve, as a fraction of the device's total memory.\n"
        "0 here = not set (no cap).");
    fraction.kind = FieldKind::Double;
    fraction.minimum = 0.0;
    fraction.maximum = 1.0;
    fraction.step = 0.05;
    fraction.decimals = 2;
    fraction.defaultValue = 0.0;
    fraction.unsetText = QStringLiteral("not set");
    specs.push_back(fraction);

    specs.push_back(boolField("pinned_use_cuda_host_register", "Use cudaHostRegister", pinned,
                              "Pinned allocations use malloc + cudaHostRegister instead of cudaHostAlloc.\n"
                              "Host-allocator options are accepted and kept; they do not change the device allocator."));
    specs.push_back(intField("pinned_num_register_threads", "Register threads", pinned,
                             "Threads used to register pinned pages (with cudaHostRegister).", 1, 128, 1, ""));
    specs.push_back(boolField("pinned_use_background_threads", "Background threads", pinned,
                              "Process pinned-memory events in a background thread."));
    specs.push_back(intField("pinned_reserve_segment_size_mb", "Reserve segment size", pinned,
                             "Pinned memory reserved up front, in MiB. 0 = none.", 0, 1 << 20, 0, " MiB", "none"));
    return specs;
}

}  // namespace allocscope::views
