#include "storage/formats/PickleWriter.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <unordered_map>

#include "storage/formats/FormatError.h"

namespace allocscope::formats {
namespace {

// Python groups APPENDS/SETITEMS in batches of 1000; we do the same so the unpickler's stack
// stays small for million-entry traces.
constexpr size_t kBatch = 1000;

class Emitter {
public:
    std::string out;

    void op(uint8_t code) { out.push_back(static_cast<char>(code)); }
    void le(uint64_t v, unsigned width) {
        for (unsigned i = 0; i < width; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
    }

    void unsignedInt(uint64_t v) {
        if (v < 0x100) {
            op('K');
            le(v, 1);
        } else if (v < 0x10000) {
            op('M');
            le(v, 2);
        } else if (v < 0x80000000u) {
            op('J');
            le(v, 4);
        } else {
            // LONG1: minimal little-endian two's complement; a set top bit needs a 0x00 byte.
            std::string bytes;
            for (uint64_t x = v; x != 0; x >>= 8) bytes.push_back(static_cast<char>(x & 0xFF));
            if (static_cast<unsigned char>(bytes.back()) & 0x80) bytes.push_back('\0');
            op(0x8a);
            le(bytes.size(), 1);
            out += bytes;
        }
    }
    void signedInt(int64_t v) {
        if (v >= 0) {
            unsignedInt(static_cast<uint64_t>(v));
        } else if (v >= INT32_MIN) {
            op('J');
            le(static_cast<uint64_t>(v) & 0xFFFFFFFFu, 4);
        } else {
            std::string bytes;
            const auto u = static_cast<uint64_t>(v);
            for (unsigned i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((u >> (8 * i)) & 0xFF));
            // Drop sign-extension bytes while the byte below still carries the sign.
            while (bytes.size() > 1 && static_cast<unsigned char>(bytes.back()) == 0xFF &&
                   (static_cast<unsigned char>(bytes[bytes.size() - 2]) & 0x80)) {
                bytes.pop_back();
            }
            op(0x8a);
            le(bytes.size(), 1);
            out += bytes;
        }
    }
    // An informative value (SnapshotReader.h): unknown is written as 2**64-1, as TorchDynamo
    // writes an unknown line, so a reader of ours reads it back as unknown.
    void informative(const std::optional<int64_t>& v) {
        if (v) {
            signedInt(*v);
        } else {
            unsignedInt(std::numeric_limits<uint64_t>::max());
        }
    }
    void boolean(bool b) { op(b ? 0x88 : 0x89); }
    void real(double d) {
        uint64_t bits = 0;
        std::memcpy(&bits, &d, sizeof bits);
        op('G');
        for (int i = 7; i >= 0; --i) out.push_back(static_cast<char>((bits >> (8 * i)) & 0xFF));
    }
    // Every string is memoised on first use and fetched with BINGET afterwards, as pybind's
    // shared key objects make CPython do.
    void str(const std::string& s) {
        auto it = strings_.find(s);
        if (it != strings_.end()) {
            get(it->second);
            return;
        }
        if (s.size() < 0x100) {
            op(0x8c);
            le(s.size(), 1);
        } else if (s.size() <= 0xFFFFFFFFu) {
            op('X');
            le(s.size(), 4);
        } else {
            op(0x8d);
            le(s.size(), 8);
        }
        out += s;
        strings_.emplace(s, memoize());
    }
    uint64_t memoize() {
        op(0x94);
        return memoCount_++;
    }
    void get(uint64_t index) {
        if (index < 0x100) {
            op('h');
            le(index, 1);
        } else {
            op('j');
            le(index, 4);
        }
    }
    void pair(const std::pair<uint64_t, uint64_t>& p) {
        unsignedInt(p.first);
        unsignedInt(p.second);
        op(0x86);  // TUPLE2
    }

    void frames(const FrameList& fs);
    std::unordered_map<std::string, uint64_t> frameLists;
    // Memo index by shared list (FrameList::identity): a list the reader shared is keyed once.
    std::unordered_map<const void*, uint64_t> frameListIds;

private:
    std::unordered_map<std::string, uint64_t> strings_;
    uint64_t memoCount_ = 0;
};

void Emitter::frames(const FrameList& fs) {
    // Identical stacks are one shared list object, as in PyTorch's own snapshots.
    if (fs.identity() != nullptr) {
        if (auto known = frameListIds.find(fs.identity()); known != frameListIds.end()) {
            get(known->second);
            return;
        }
    }
    std::string key;
    for (const SnapshotFrame& f : fs) {
        // Length-prefixed, so no two different stacks share a key.
        key += std::to_string(f.filename.size()) + ":" + f.filename + (f.line ? std::to_string(*f.line) : "?") + ";" +
               std::to_string(f.name.size()) + ":" + f.name;
    }
    auto it = frameLists.find(key);
    if (it != frameLists.end()) {
        if (fs.identity() != nullptr) frameListIds.emplace(fs.identity(), it->second);
        get(it->second);
        return;
    }
    op(']');
    const uint64_t index = memoize();
    frameLists.emplace(key, index);
    if (fs.identity() != nullptr) frameListIds.emplace(fs.identity(), index);
    if (fs.empty()) return;
    op('(');
    for (const SnapshotFrame& f : fs) {
        op('}');
        op('(');
        str("name");
        str(f.name);
        str("filename");
        str(f.filename);
        str("line");
        informative(f.line);
        op('u');
    }
    op('e');
}

// Emits a list of `n` items produced by `item(i)`, in batches.
template <typename F>
void list(Emitter& e, size_t n, F item) {
    e.op(']');
    for (size_t start = 0; start < n; start += kBatch) {
        e.op('(');
        for (size_t i = start; i < n && i < start + kBatch; ++i) item(i);
        e.op('e');
    }
}

void block(Emitter& e, const SnapshotBlock& b) {
    e.op('}');
    e.op('(');
    e.str("address");
    e.unsignedInt(b.address);
    e.str("size");
    e.unsignedInt(b.size);
    e.str("requested_size");
    e.unsignedInt(b.requested_size);
    e.str("state");
    e.str(b.state);
    e.str("frames");
    e.frames(b.frames);
    e.op('u');
}

void segment(Emitter& e, const SnapshotSegment& s) {
    e.op('}');
    e.op('(');
    e.str("device");
    e.signedInt(s.device);
    e.str("address");
    e.unsignedInt(s.address);
    e.str("total_size");
    e.unsignedInt(s.total_size);
    e.str("allocated_size");
    e.unsignedInt(s.allocated_size);
    e.str("active_size");
    e.unsignedInt(s.active_size);
    e.str("requested_size");
    e.unsignedInt(s.requested_size);
    e.str("stream");
    e.signedInt(static_cast<int64_t>(s.stream));  // PyTorch's type: cudaStream_t as int64
    e.str("segment_type");
    e.str(s.segment_type);
    e.str("segment_pool_id");
    e.pair(s.segment_pool_id);
    e.str("is_expandable");
    e.boolean(s.is_expandable);
    e.str("frames");
    e.frames(s.frames);
    e.op('u');
    e.str("blocks");
    list(e, s.blocks.size(), [&](size_t i) { block(e, s.blocks[i]); });
    e.op('s');
}

void traceEntry(Emitter& e, const TraceEntry& t) {
    e.op('}');
    e.op('(');
    e.str("action");
    e.str(t.action);
    if (t.has_addr) {
        e.str("addr");
        e.unsignedInt(t.addr);
    }
    if (t.has_device_free) {
        e.str("device_free");
        e.unsignedInt(t.device_free);
    }
    e.str("size");
    e.unsignedInt(t.size);
    e.str("stream");
    e.signedInt(static_cast<int64_t>(t.stream));
    e.str("time_us");
    if (t.time_us_unknown) {
        e.informative(std::nullopt);
    } else {
        e.signedInt(t.time_us);
    }
    e.str("compile_context");
    e.str(t.compile_context);
    e.str("user_metadata");
    e.str(t.user_metadata);
    if (t.has_pool_id) {
        e.str("pool_id");
        e.pair(t.pool_id);
    }
    e.str("frames");
    e.frames(t.frames);
    e.op('u');
}

void settings(Emitter& e, const AllocatorSettings& s) {
    e.op('}');
    e.op('(');
    if (s.conf) { e.str("PYTORCH_CUDA_ALLOC_CONF"); e.str(*s.conf); }
    if (s.max_split_size) { e.str("max_split_size"); e.signedInt(*s.max_split_size); }
    if (s.garbage_collection_threshold) {
        e.str("garbage_collection_threshold");
        e.real(*s.garbage_collection_threshold);
    }
    if (s.expandable_segments) { e.str("expandable_segments"); e.boolean(*s.expandable_segments); }
    if (s.pinned_num_register_threads) {
        e.str("pinned_num_register_threads");
        e.signedInt(*s.pinned_num_register_threads);
    }
    if (s.release_lock_on_cudamalloc) {
        e.str("release_lock_on_cudamalloc");
        e.boolean(*s.release_lock_on_cudamalloc);
    }
    if (s.pinned_use_cuda_host_register) {
        e.str("pinned_use_cuda_host_register");
        e.boolean(*s.pinned_use_cuda_host_register);
    }
    if (s.graph_capture_record_stream_reuse) {
        e.str("graph_capture_record_stream_reuse");
        e.boolean(*s.graph_capture_record_stream_reuse);
    }
    if (s.max_round_threshold) { e.str("max_round_threshold"); e.signedInt(*s.max_round_threshold); }
    if (s.max_cached_size) { e.str("max_cached_size"); e.signedInt(*s.max_cached_size); }
    if (s.roundup_present) {
        e.str("roundup_power2_divisions");
        e.op('}');
        if (!s.roundup_power2_divisions.empty()) {
            e.op('(');
            for (const auto& [bucket, divisions] : s.roundup_power2_divisions) {
                e.str(std::to_string(bucket));
                e.unsignedInt(divisions);
            }
            e.op('u');
        }
    }
    e.op('u');
}

}  // namespace

std::string PickleWriter::write(const Snapshot& snap) {
    Emitter e;
    e.op(0x80);  // PROTO 4
    e.op(4);
    e.op('}');
    e.str("segments");
    list(e, snap.segments.size(), [&](size_t i) { segment(e, snap.segments[i]); });
    e.op('s');
    e.str("device_traces");
    list(e, snap.device_traces.size(), [&](size_t d) {
        const std::vector<TraceEntry>& entries = snap.device_traces[d];
        list(e, entries.size(), [&](size_t i) { traceEntry(e, entries[i]); });
    });
    e.op('s');
    if (snap.allocator_settings.present) {
        e.str("allocator_settings");
        settings(e, snap.allocator_settings);
        e.op('s');
    }
    e.str("external_annotations");
    list(e, snap.external_annotations.size(), [&](size_t i) {
        const Annotation& a = snap.external_annotations[i];
        e.op('}');
        e.op('(');
        e.str("stage");
        e.str(a.stage);
        e.str("name");
        e.str(a.name);
        e.str("device");
        e.informative(a.device);
        e.str("time_us");
        e.informative(a.time_us);
        e.op('u');
    });
    e.op('s');
    e.op('.');
    return std::move(e.out);
}

void PickleWriter::writeFile(const Snapshot& snapshot, const std::string& path) {
    const std::string bytes = write(snapshot);
    std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "wb"), &std::fclose);
    if (!file) throw FormatError(std::string("cannot write file: ") + std::strerror(errno), path);
    if (std::fwrite(bytes.data(), 1, bytes.size(), file.get()) != bytes.size() || std::fflush(file.get()) != 0) {
        throw FormatError(std::string("cannot write file: ") + std::strerror(errno), path);
    }
}

}  // namespace allocscope::formats
