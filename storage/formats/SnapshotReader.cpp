#include "storage/formats/SnapshotReader.h"

#include <limits>
#include <vector>

#include "storage/formats/FileBytes.h"
#include "storage/formats/FormatError.h"
#include "storage/formats/JsonReader.h"
#include "storage/formats/PickleReader.h"

namespace allocscope::formats {
namespace {

// Where a value sits in the snapshot, as a chain on the C++ stack (the schema is only a few levels
// deep). Rendered only when an error is raised.
struct Path {
    const Path* parent = nullptr;
    std::string_view key;  // a dict key, or empty for a list index
    size_t index = 0;

    Path child(std::string_view k) const { return Path{this, k, 0}; }
    Path at(size_t i) const { return Path{this, {}, i}; }

    std::string render() const {
        std::vector<const Path*> chain;
        for (const Path* p = this; p != nullptr && p->parent != nullptr; p = p->parent) chain.push_back(p);
        std::string out;
        for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
            if ((*it)->key.empty()) {
                out += "[" + std::to_string((*it)->index) + "]";
            } else {
                if (!out.empty()) out += ".";
                out += (*it)->key;
            }
        }
        return out.empty() ? std::string("top level") : out;
    }
};

class Converter {
public:
    explicit Converter(const PyTree& tree) : t_(tree) {}

    Snapshot snapshot();

private:
    [[noreturn]] void fail(const std::string& what, const Path& path, PyRef ref) const {
        throw FormatError(what, path.render() + ", byte " + std::to_string(t_.node(ref).offset));
    }
    void expect(PyRef ref, PyKind kind, const Path& path) const {
        if (t_.kind(ref) != kind) {
            fail(std::string("expected ") + PyTree::kindName(kind) + ", found " + PyTree::kindName(t_.kind(ref)),
                 path, ref);
        }
    }
    const std::vector<PyRef>& list(PyRef ref, const Path& path) const {
        expect(ref, PyKind::List, path);
        return t_.items(ref);
    }
    uint64_t u64(PyRef ref, const Path& path) const {
        expect(ref, PyKind::Int, path);
        if (t_.node(ref).negative) fail("negative value " + std::to_string(static_cast<int64_t>(t_.node(ref).bits)) +
                                        " where a size or address is expected", path, ref);
        return t_.node(ref).bits;
    }
    // Streams are cudaStream_t cast to int64 by PyTorch: keep any 64-bit pattern.
    uint64_t bits64(PyRef ref, const Path& path) const {
        expect(ref, PyKind::Int, path);
        return t_.node(ref).bits;
    }
    int64_t i64(PyRef ref, const Path& path) const {
        expect(ref, PyKind::Int, path);
        const PyNode& n = t_.node(ref);
        if (!n.negative && n.bits > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
            fail("value " + std::to_string(n.bits) + " does not fit a signed 64-bit integer", path, ref);
        }
        return static_cast<int64_t>(n.bits);
    }
    std::string str(PyRef ref, const Path& path) const {
        expect(ref, PyKind::Str, path);
        return t_.text(ref);
    }
    bool boolean(PyRef ref, const Path& path) const {
        expect(ref, PyKind::Bool, path);
        return t_.node(ref).bits != 0;
    }
    double number(PyRef ref, const Path& path) const {
        if (t_.kind(ref) == PyKind::Float) return t_.floatValue(ref);
        if (t_.kind(ref) == PyKind::Int) {
            return t_.node(ref).negative ? static_cast<double>(static_cast<int64_t>(t_.node(ref).bits))
                                         : static_cast<double>(t_.node(ref).bits);
        }
        fail(std::string("expected a number, found ") + PyTree::kindName(t_.kind(ref)), path, ref);
    }
    // Pool ids are 2-tuples in a pickle and 2-element lists in JSON.
    std::pair<uint64_t, uint64_t> pair(PyRef ref, const Path& path) const {
        if (t_.kind(ref) != PyKind::Tuple && t_.kind(ref) != PyKind::List) {
            fail(std::string("expected a 2-tuple, found ") + PyTree::kindName(t_.kind(ref)), path, ref);
        }
        const std::vector<PyRef>& items = t_.items(ref);
        if (items.size() != 2) fail("expected 2 items, found " + std::to_string(items.size()), path, ref);
        return {bits64(items[0], path.at(0)), bits64(items[1], path.at(1))};
    }
    PyRef dict(PyRef ref, const Path& path) const {
        expect(ref, PyKind::Dict, path);
        return ref;
    }
    bool has(PyRef d, std::string_view key, PyRef& out) const { return t_.find(d, key, out); }
    PyRef required(PyRef d, std::string_view key, const Path& path) const {
        PyRef out = 0;
        if (!t_.find(d, key, out)) fail("missing key '" + std::string(key) + "'", path, d);
        return out;
    }

    std::vector<SnapshotFrame> frames(PyRef ref, const Path& path) const;
    SnapshotSegment segment(PyRef ref, const Path& path) const;
    SnapshotBlock block(PyRef ref, const Path& path) const;
    TraceEntry traceEntry(PyRef ref, const Path& path) const;
    AllocatorSettings settings(PyRef ref, const Path& path) const;
    Annotation annotation(PyRef ref, const Path& path) const;

    const PyTree& t_;
};

std::vector<SnapshotFrame> Converter::frames(PyRef ref, const Path& path) const {
    std::vector<SnapshotFrame> out;
    const std::vector<PyRef>& items = list(ref, path);
    out.reserve(items.size());
    for (size_t i = 0; i < items.size(); ++i) {
        const Path p = path.at(i);
        const PyRef d = dict(items[i], p);
        SnapshotFrame f;
        PyRef v = 0;
        if (has(d, "filename", v)) f.filename = str(v, p.child("filename"));
        if (has(d, "line", v)) f.line = i64(v, p.child("line"));
        if (has(d, "name", v)) f.name = str(v, p.child("name"));
        out.push_back(std::move(f));
    }
    return out;
}

SnapshotBlock Converter::block(PyRef ref, const Path& path) const {
    const PyRef d = dict(ref, path);
    SnapshotBlock b;
    PyRef v = 0;
    b.size = u64(required(d, "size", path), path.child("size"));
    b.state = str(required(d, "state", path), path.child("state"));
    if (has(d, "address", v)) b.address = u64(v, path.child("address"));
    if (has(d, "requested_size", v)) b.requested_size = u64(v, path.child("requested_size"));
    if (has(d, "frames", v)) b.frames = frames(v, path.child("frames"));
    return b;
}

SnapshotSegment Converter::segment(PyRef ref, const Path& path) const {
    const PyRef d = dict(ref, path);
    SnapshotSegment s;
    PyRef v = 0;
    s.address = u64(required(d, "address", path), path.child("address"));
    s.total_size = u64(required(d, "total_size", path), path.child("total_size"));
    if (has(d, "device", v)) s.device = i64(v, path.child("device"));
    if (has(d, "allocated_size", v)) s.allocated_size = u64(v, path.child("allocated_size"));
    if (has(d, "active_size", v)) s.active_size = u64(v, path.child("active_size"));
    if (has(d, "requested_size", v)) s.requested_size = u64(v, path.child("requested_size"));
    if (has(d, "stream", v)) s.stream = bits64(v, path.child("stream"));
    if (has(d, "segment_type", v)) s.segment_type = str(v, path.child("segment_type"));
    if (has(d, "segment_pool_id", v)) s.segment_pool_id = pair(v, path.child("segment_pool_id"));
    if (has(d, "is_expandable", v)) s.is_expandable = boolean(v, path.child("is_expandable"));
    if (has(d, "frames", v)) s.frames = frames(v, path.child("frames"));
    if (has(d, "blocks", v)) {
        const Path bp = path.child("blocks");
        const std::vector<PyRef>& items = list(v, bp);
        // Files before PyTorch 2.1 have no block addresses: blocks tile the segment in order.
        uint64_t running = s.address;
        s.blocks.reserve(items.size());
        for (size_t i = 0; i < items.size(); ++i) {
            PyRef a = 0;
            SnapshotBlock b = block(items[i], bp.at(i));
            if (!has(items[i], "address", a)) b.address = running;
            running = b.address + b.size;
            s.blocks.push_back(std::move(b));
        }
    }
    return s;
}

TraceEntry Converter::traceEntry(PyRef ref, const Path& path) const {
    const PyRef d = dict(ref, path);
    TraceEntry e;
    PyRef v = 0;
    e.action = str(required(d, "action", path), path.child("action"));
    if (has(d, "addr", v)) {
        e.addr = u64(v, path.child("addr"));
        e.has_addr = true;
    }
    if (has(d, "device_free", v)) {
        e.device_free = u64(v, path.child("device_free"));
        e.has_device_free = true;
    }
    if (has(d, "size", v)) e.size = u64(v, path.child("size"));
    if (has(d, "stream", v)) e.stream = bits64(v, path.child("stream"));
    if (has(d, "time_us", v)) e.time_us = i64(v, path.child("time_us"));
    if (has(d, "frames", v)) e.frames = frames(v, path.child("frames"));
    if (has(d, "compile_context", v)) e.compile_context = str(v, path.child("compile_context"));
    if (has(d, "user_metadata", v)) e.user_metadata = str(v, path.child("user_metadata"));
    if (has(d, "pool_id", v)) {
        e.pool_id = pair(v, path.child("pool_id"));
        e.has_pool_id = true;
    }
    return e;
}

AllocatorSettings Converter::settings(PyRef ref, const Path& path) const {
    const PyRef d = dict(ref, path);
    AllocatorSettings s;
    s.present = true;
    PyRef v = 0;
    if (has(d, "PYTORCH_CUDA_ALLOC_CONF", v)) s.conf = str(v, path.child("PYTORCH_CUDA_ALLOC_CONF"));
    if (has(d, "max_split_size", v)) {
        // PyTorch casts SIZE_MAX ("unlimited") to int64, giving -1; a writer that kept it unsigned
        // gives 2^64-1. Both mean unlimited, so keep the 64-bit pattern as int64.
        s.max_split_size = static_cast<int64_t>(bits64(v, path.child("max_split_size")));
    }
    if (has(d, "garbage_collection_threshold", v)) {
        s.garbage_collection_threshold = number(v, path.child("garbage_collection_threshold"));
    }
    if (has(d, "expandable_segments", v)) s.expandable_segments = boolean(v, path.child("expandable_segments"));
    if (has(d, "pinned_num_register_threads", v)) {
        s.pinned_num_register_threads = i64(v, path.child("pinned_num_register_threads"));
    }
    if (has(d, "release_lock_on_cudamalloc", v)) {
        s.release_lock_on_cudamalloc = boolean(v, path.child("release_lock_on_cudamalloc"));
    }
    if (has(d, "pinned_use_cuda_host_register", v)) {
        s.pinned_use_cuda_host_register = boolean(v, path.child("pinned_use_cuda_host_register"));
    }
    if (has(d, "graph_capture_record_stream_reuse", v)) {
        s.graph_capture_record_stream_reuse = boolean(v, path.child("graph_capture_record_stream_reuse"));
    }
    if (has(d, "max_round_threshold", v)) s.max_round_threshold = i64(v, path.child("max_round_threshold"));
    if (has(d, "max_cached_size", v)) s.max_cached_size = i64(v, path.child("max_cached_size"));
    if (has(d, "roundup_power2_divisions", v)) {
        const Path rp = path.child("roundup_power2_divisions");
        const std::vector<PyRef>& kv = t_.items(dict(v, rp));
        s.roundup_present = true;
        for (size_t i = 0; i + 1 < kv.size(); i += 2) {
            const std::string key = str(kv[i], rp);
            const Path vp = rp.child(t_.text(kv[i]));
            uint64_t bucket = 0;
            bool ok = !key.empty() && key.size() <= 19;
            for (char c : key) ok = ok && c >= '0' && c <= '9';
            if (!ok) fail("size bucket key '" + key + "' is not a decimal number", rp, kv[i]);
            for (char c : key) bucket = bucket * 10 + static_cast<uint64_t>(c - '0');
            s.roundup_power2_divisions[bucket] = u64(kv[i + 1], vp);
        }
    }
    return s;
}

Annotation Converter::annotation(PyRef ref, const Path& path) const {
    const PyRef d = dict(ref, path);
    Annotation a;
    PyRef v = 0;
    if (has(d, "name", v)) a.name = str(v, path.child("name"));
    if (has(d, "stage", v)) a.stage = str(v, path.child("stage"));
    if (has(d, "device", v)) a.device = i64(v, path.child("device"));
    if (has(d, "time_us", v)) a.time_us = i64(v, path.child("time_us"));
    return a;
}

Snapshot Converter::snapshot() {
    Snapshot snap;
    const Path top;
    const PyRef root = t_.root;
    PyRef segments = 0;
    if (t_.kind(root) == PyKind::List) {
        segments = root;  // the oldest form: a bare list of segments
    } else if (t_.kind(root) == PyKind::Dict) {
        if (!has(root, "segments", segments)) fail("missing key 'segments': not a PyTorch memory snapshot", top, root);
    } else {
        fail(std::string("top level is ") + PyTree::kindName(t_.kind(root)) +
             ", expected a dict (a PyTorch memory snapshot)", top, root);
    }
    const Path sp = t_.kind(root) == PyKind::List ? top : top.child("segments");
    const std::vector<PyRef>& segs = list(segments, sp);
    snap.segments.reserve(segs.size());
    for (size_t i = 0; i < segs.size(); ++i) snap.segments.push_back(segment(segs[i], sp.at(i)));
    if (t_.kind(root) != PyKind::Dict) return snap;

    PyRef v = 0;
    if (has(root, "device_traces", v)) {
        const Path dp = top.child("device_traces");
        const std::vector<PyRef>& devices = list(v, dp);
        snap.device_traces.resize(devices.size());
        for (size_t dev = 0; dev < devices.size(); ++dev) {
            const Path devPath = dp.at(dev);
            const std::vector<PyRef>& entries = list(devices[dev], devPath);
            snap.device_traces[dev].reserve(entries.size());
            for (size_t i = 0; i < entries.size(); ++i) {
                snap.device_traces[dev].push_back(traceEntry(entries[i], devPath.at(i)));
            }
        }
    }
    if (has(root, "allocator_settings", v)) snap.allocator_settings = settings(v, top.child("allocator_settings"));
    if (has(root, "external_annotations", v)) {
        const Path ap = top.child("external_annotations");
        const std::vector<PyRef>& items = list(v, ap);
        for (size_t i = 0; i < items.size(); ++i) snap.external_annotations.push_back(annotation(items[i], ap.at(i)));
    }
    return snap;
}

}  // namespace

SnapshotReader::Encoding SnapshotReader::detect(std::string_view bytes) {
    size_t i = 0;
    if (bytes.substr(0, 3) == "\xEF\xBB\xBF") i = 3;
    while (i < bytes.size() && (bytes[i] == ' ' || bytes[i] == '\t' || bytes[i] == '\n' || bytes[i] == '\r')) ++i;
    if (i < bytes.size() && (bytes[i] == '{' || bytes[i] == '[')) return Encoding::Json;
    return Encoding::Pickle;
}

Snapshot SnapshotReader::read(std::string_view bytes) {
    const PyTree tree = detect(bytes) == Encoding::Json ? JsonReader::read(bytes) : PickleReader::read(bytes);
    return fromTree(tree);
}

Snapshot SnapshotReader::readFile(const std::string& path) { return read(FileBytes::read(path)); }

Snapshot SnapshotReader::fromTree(const PyTree& tree) {
    if (tree.size() == 0) throw FormatError("empty value tree", "top level");
    Converter converter(tree);
    return converter.snapshot();
}

}  // namespace allocscope::formats
