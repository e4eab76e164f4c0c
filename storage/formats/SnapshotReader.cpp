#include "storage/formats/SnapshotReader.h"

#include <algorithm>
#include <array>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "storage/formats/FileBytes.h"
#include "storage/formats/FormatError.h"
#include "storage/formats/JsonReader.h"
#include "storage/formats/PickleReader.h"
#include "storage/formats/TraceBatchSink.h"

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

// Every dict key the reader knows, across all snapshot dicts. A dict is read in one pass into a
// Fields table (key -> value, last occurrence wins as in Python), instead of one linear search per
// key: snapshots have millions of small dicts.
enum Key : uint8_t {
    kSegments, kDeviceTraces, kAllocatorSettings, kExternalAnnotations,
    kDevice, kAddress, kTotalSize, kAllocatedSize, kActiveSize, kRequestedSize, kStream, kSegmentType,
    kSegmentPoolId, kIsExpandable, kFrames, kBlocks, kSize, kState,
    kAction, kAddr, kDeviceFree, kTimeUs, kCompileContext, kUserMetadata, kPoolId,
    kFilename, kLine, kName, kStage,
    kConf, kMaxSplitSize, kGcThreshold, kExpandableSegments, kPinnedThreads, kReleaseLock, kPinnedHostRegister,
    kGraphCaptureReuse, kMaxRoundThreshold, kMaxCachedSize, kRoundup,
    kKeyCount
};
constexpr std::array<std::string_view, kKeyCount> kKeyNames{
    "segments", "device_traces", "allocator_settings", "external_annotations",
    "device", "address", "total_size", "allocated_size", "active_size", "requested_size", "stream", "segment_type",
    "segment_pool_id", "is_expandable", "frames", "blocks", "size", "state",
    "action", "addr", "device_free", "time_us", "compile_context", "user_metadata", "pool_id",
    "filename", "line", "name", "stage",
    "PYTORCH_CUDA_ALLOC_CONF", "max_split_size", "garbage_collection_threshold", "expandable_segments",
    "pinned_num_register_threads", "release_lock_on_cudamalloc", "pinned_use_cuda_host_register",
    "graph_capture_record_stream_reuse", "max_round_threshold", "max_cached_size", "roundup_power2_divisions",
};
constexpr PyRef kAbsent = std::numeric_limits<PyRef>::max();  // never a node: PyTree stops before
constexpr uint8_t kUnknownKey = 0xFF;
constexpr uint8_t kNotLookedUp = 0xFE;
constexpr uint8_t kNotStr = 0xFD;

// Hashes for the frame-list caches below.
// Transparent, so a tree's items (a view) find a stored vector without copying them.
struct RefsHash {
    using is_transparent = void;
    size_t operator()(PyItems refs) const {
        uint64_t h = 1469598103934665603ull;  // FNV-1a over the handles
        for (const PyRef r : refs) h = (h ^ r) * 1099511628211ull;
        return static_cast<size_t>(h);
    }
    size_t operator()(const std::vector<PyRef>& refs) const { return (*this)(PyItems(refs)); }
};
struct RefsEqual {
    using is_transparent = void;
    bool operator()(PyItems a, PyItems b) const { return std::equal(a.begin(), a.end(), b.begin(), b.end()); }
};
struct FramesHash {
    size_t operator()(const FrameList& list) const {
        size_t h = list.size();
        for (const SnapshotFrame& f : list) {
            h = h * 31 + std::hash<std::string_view>{}(f.filename);
            h = h * 31 + (f.line ? std::hash<int64_t>{}(*f.line) : 0x9e3779b9u);
            h = h * 31 + std::hash<std::string_view>{}(f.name);
        }
        return h;
    }
};

struct Fields {
    PyRef dict = 0;
    std::array<PyRef, kKeyCount> value;
    bool has(Key k) const { return value[k] != kAbsent; }
    PyRef operator[](Key k) const { return value[k]; }
};

class Converter {
public:
    // `streaming`: the tree changes between calls (a streaming read drops what was converted and
    // reuses the handles: forget() says which); frame lists are then remembered by their dicts
    // always, as those dicts are shared and stay (TreeCompactor).
    explicit Converter(const PyTree& tree, bool streaming = false)
        : t_(tree), streaming_(streaming), keyOf_(tree.textCount(), kNotLookedUp) {}

    Snapshot snapshot();
    TraceEntry traceEntry(PyRef ref, const Path& path);
    // traceEntry() for an entry the pickle's fast path decoded (DecodedEntries), into `e` (every
    // field is set). False when converting it could fail, or needs what only traceEntry() reads
    // (pool_id, a key that is not a str): the reader then gives the batch to traceEntry(), which
    // says what is wrong, at which byte.
    bool decodedEntry(std::span<const DecodedField> pairs, TraceEntry& e);
    void forget(PyRef firstRef, size_t firstText) {
        if (keyOf_.size() > firstText) keyOf_.resize(firstText);
        if (sharedByText_.size() > firstText) sharedByText_.resize(firstText);
        if (framesByRef_.size() > firstRef) framesByRef_.resize(firstRef);
        if (keyByRef_.size() > firstRef) keyByRef_.resize(firstRef);
        lastKeys_.clear();
        // Only lists remembered since the last forget() can hold such handles: the older ones
        // survived it, so all their handles are below its firstRef, and firstRef never decreases.
        for (const std::vector<PyRef>& key : recentKeys_) {
            if (std::any_of(key.begin(), key.end(), [firstRef](PyRef r) { return r >= firstRef; })) byItems_.erase(key);
        }
        recentKeys_.clear();
    }

private:
    [[noreturn]] void fail(const std::string& what, const Path& path, PyRef ref) const {
        throw FormatError(what, path.render() + ", byte " + std::to_string(t_.offset(ref)));
    }
    void expect(PyRef ref, PyKind kind, const Path& path) const {
        if (t_.kind(ref) != kind) {
            fail(std::string("expected ") + PyTree::kindName(kind) + ", found " + PyTree::kindName(t_.kind(ref)),
                 path, ref);
        }
    }
    PyItems list(PyRef ref, const Path& path) const {
        expect(ref, PyKind::List, path);
        return t_.items(ref);
    }
    uint64_t u64(PyRef ref, const Path& path) const {
        expect(ref, PyKind::Int, path);
        if (t_.negative(ref)) fail("negative value " + std::to_string(static_cast<int64_t>(t_.bits(ref))) +
                                        " where a size or address is expected", path, ref);
        return t_.bits(ref);
    }
    // Streams are cudaStream_t cast to int64 by PyTorch: keep any 64-bit pattern.
    uint64_t bits64(PyRef ref, const Path& path) const {
        expect(ref, PyKind::Int, path);
        return t_.bits(ref);
    }
    int64_t i64(PyRef ref, const Path& path) const {
        expect(ref, PyKind::Int, path);
        const PyNode n = t_.node(ref);
        if (!n.negative && n.bits > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
            fail("value " + std::to_string(n.bits) + " does not fit a signed 64-bit integer", path, ref);
        }
        return static_cast<int64_t>(n.bits);
    }
    // A value that is only informative (a frame's line, a time, an annotation's device): one that
    // does not fit int64 is unknown (std::nullopt), not an error. TorchDynamo writes 2**64-1 for a
    // frame without a line; refusing the whole file for it would refuse every compiled program.
    std::optional<int64_t> informative(PyRef ref, const Path& path) const {
        expect(ref, PyKind::Int, path);
        if (!t_.negative(ref) && t_.bits(ref) > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
            return std::nullopt;
        }
        return static_cast<int64_t>(t_.bits(ref));
    }
    // The bytes [address, address + size) must lie inside the 64-bit address space: a replay
    // computes ends and neighbours from them. Blames the larger of the two values (the absurd
    // one, e.g. a 2**64-1 from a writer's "unknown"), at its own byte.
    void checkRange(uint64_t address, PyRef addressRef, const Path& addressPath, uint64_t size, PyRef sizeRef,
                    const Path& sizePath) const {
        if (size == 0 || address <= std::numeric_limits<uint64_t>::max() - (size - 1)) return;
        const std::string what = "the range at address " + std::to_string(address) + " of " + std::to_string(size) +
                                 " bytes runs past the end of the 64-bit address space";
        if (addressRef != kAbsent && address >= size) fail(what, addressPath, addressRef);
        fail(what, sizePath, sizeRef);
    }
    std::string str(PyRef ref, const Path& path) const {
        expect(ref, PyKind::Str, path);
        return t_.text(ref);
    }
    // A trace entry's string, interned: equal texts share one SharedString (see SharedString.h).
    SharedString shared(PyRef ref, const Path& path) {
        expect(ref, PyKind::Str, path);
        const std::string& text = t_.text(ref);
        if (text.empty()) return {};
        auto it = interned_.find(text);
        if (it != interned_.end()) return it->second;
        SharedString s{std::string(text)};
        // The key views the shared text itself, which lives as long as the map holds `s`.
        interned_.emplace(std::string_view(s.str()), s);
        return s;
    }
    bool boolean(PyRef ref, const Path& path) const {
        expect(ref, PyKind::Bool, path);
        return t_.bits(ref) != 0;
    }
    double number(PyRef ref, const Path& path) const {
        if (t_.kind(ref) == PyKind::Float) return t_.floatValue(ref);
        if (t_.kind(ref) == PyKind::Int) {
            return t_.negative(ref) ? static_cast<double>(static_cast<int64_t>(t_.bits(ref)))
                                         : static_cast<double>(t_.bits(ref));
        }
        fail(std::string("expected a number, found ") + PyTree::kindName(t_.kind(ref)), path, ref);
    }
    // Pool ids are 2-tuples in a pickle and 2-element lists in JSON.
    std::pair<uint64_t, uint64_t> pair(PyRef ref, const Path& path) const {
        if (t_.kind(ref) != PyKind::Tuple && t_.kind(ref) != PyKind::List) {
            fail(std::string("expected a 2-tuple, found ") + PyTree::kindName(t_.kind(ref)), path, ref);
        }
        const PyItems items = t_.items(ref);
        if (items.size() != 2) fail("expected 2 items, found " + std::to_string(items.size()), path, ref);
        return {bits64(items[0], path.at(0)), bits64(items[1], path.at(1))};
    }
    PyRef dict(PyRef ref, const Path& path) const {
        expect(ref, PyKind::Dict, path);
        return ref;
    }
    // Which known key a str node names; memo-shared key strings are looked up once.
    uint8_t keyOf(PyRef key) {
        const uint32_t index = t_.index(key);
        if (index >= keyOf_.size()) keyOf_.resize(t_.textCount(), kNotLookedUp);
        uint8_t& cached = keyOf_[index];
        if (cached == kNotLookedUp) {
            cached = kUnknownKey;
            const std::string& text = t_.text(key);
            for (size_t k = 0; k < kKeyCount; ++k) {
                if (kKeyNames[k] == text) {
                    cached = static_cast<uint8_t>(k);
                    break;
                }
            }
        }
        return cached;
    }
    // keyOf() of a decoded entry's key, remembered by its handle (each entry has a dozen keys, the
    // same few handles); kNotStr for a key that is no str (decodedEntry() refuses those).
    uint8_t keyOfRef(PyRef key) {
        if (key < keyByRef_.size() && keyByRef_[key] != kNotLookedUp) return keyByRef_[key];
        if (key == DecodedEntries::kInlineInt) return kNotStr;
        const uint8_t k = t_.kind(key) == PyKind::Str ? keyOf(key) : kNotStr;
        if (key >= keyByRef_.size()) keyByRef_.resize(t_.size(), kNotLookedUp);
        keyByRef_[key] = k;
        return k;
    }
    Fields fields(PyRef ref, const Path& path) {
        Fields f;
        f.dict = dict(ref, path);
        f.value.fill(kAbsent);
        const PyItems kv = t_.items(f.dict);
        for (size_t i = 0; i + 1 < kv.size(); i += 2) {
            if (t_.kind(kv[i]) != PyKind::Str) continue;  // unknown (non-str) keys are ignored
            const uint8_t k = keyOf(kv[i]);
            if (k != kUnknownKey) f.value[k] = kv[i + 1];
        }
        return f;
    }
    PyRef required(const Fields& f, Key key, const Path& path) const {
        if (!f.has(key)) fail("missing key '" + std::string(kKeyNames[key]) + "'", path, f.dict);
        return f[key];
    }

    FrameList frames(PyRef ref, const Path& path);
    // frames() for decodedEntry(): false instead of an error.
    bool framesIfValid(PyRef ref, FrameList& out);
    // Remembers the frames read from the frame dicts `items` (first sight); returns the shared list.
    const FrameList& remember(PyItems items, std::vector<SnapshotFrame> frames);
    // shared() of a str value, remembered by its text (decodedEntry(): the same few per entry).
    const SharedString& sharedText(PyRef ref);
    SnapshotSegment segment(PyRef ref, const Path& path);
    SnapshotBlock block(const Fields& f, const Path& path);
    AllocatorSettings settings(PyRef ref, const Path& path);
    Annotation annotation(PyRef ref, const Path& path);

    const PyTree& t_;
    bool streaming_ = false;
    std::vector<uint8_t> keyOf_;  // by text index: a Key, kUnknownKey or kNotLookedUp
    // Frame lists are shared in the Snapshot (see FrameList.h), found two ways, cheapest first: a
    // list of the same frame dict objects (PyTorch shares the frame dicts through the memo, and a
    // memo-shared list has the same dicts too), then equal contents (JSON shares nothing). The
    // tree is immutable while we convert, so the same handles always mean the same contents.
    std::unordered_map<std::vector<PyRef>, FrameList, RefsHash, RefsEqual> byItems_;
    std::unordered_set<FrameList, FramesHash> byContents_;
    std::vector<std::vector<PyRef>> recentKeys_;  // streaming: byItems_ keys since the last forget()
    std::unordered_map<std::string_view, SharedString> interned_;  // by contents (see shared())
    std::vector<SharedString> sharedByText_;  // sharedText()'s, by text index (empty: not yet)
    struct KnownFrames {
        FrameList frames;
        bool known = false;
    };
    std::vector<KnownFrames> framesByRef_;  // framesIfValid()'s, by the list's handle
    std::vector<uint8_t> keyByRef_;         // keyOfRef()'s, by the key's handle
    // decodedEntry()'s: the last entry's keys and where each known key was among them (kNotAt:
    // not there). Entries repeat their keys in one order, so the next entry's keys are compared
    // with these rather than each looked up again.
    static constexpr size_t kNotAt = std::numeric_limits<size_t>::max();
    std::vector<PyRef> lastKeys_;
    std::array<size_t, kKeyCount> lastAt_{};
};

FrameList Converter::frames(PyRef ref, const Path& path) {
    const PyItems items = list(ref, path);
    if (items.empty()) return {};
    if (auto it = byItems_.find(items); it != byItems_.end()) return it->second;
    // First sight of these frame dicts: read them (this is where a bad frame is reported, at the
    // first list that holds it, as before the sharing).
    std::vector<SnapshotFrame> out;
    out.reserve(items.size());
    for (size_t i = 0; i < items.size(); ++i) {
        const Path p = path.at(i);
        const Fields f = fields(items[i], p);
        SnapshotFrame frame;
        if (f.has(kFilename)) frame.filename = str(f[kFilename], p.child("filename"));
        if (f.has(kLine)) frame.line = informative(f[kLine], p.child("line"));
        if (f.has(kName)) frame.name = str(f[kName], p.child("name"));
        out.push_back(std::move(frame));
    }
    return remember(items, std::move(out));
}

const FrameList& Converter::remember(PyItems items, std::vector<SnapshotFrame> frames) {
    const auto [it, added] = byContents_.insert(FrameList(std::move(frames)));
    // Only new contents remember their dicts: in a JSON file every list has dicts of its own, and
    // remembering each would cost a map entry per trace entry.
    if (added || streaming_) {
        std::vector<PyRef> key(items.begin(), items.end());
        if (streaming_) recentKeys_.push_back(key);
        byItems_.emplace(std::move(key), *it);
    }
    return *it;
}

bool Converter::framesIfValid(PyRef ref, FrameList& out) {
    if (t_.kind(ref) != PyKind::List) return false;
    // Most entries hold a list the stream kept once for all equal ones (TreeCompactor): found by
    // its handle, which stays until forget().
    if (ref < framesByRef_.size() && framesByRef_[ref].known) {
        if (!out.sharesWith(framesByRef_[ref].frames)) out = framesByRef_[ref].frames;
        return true;
    }
    const PyItems items = t_.items(ref);
    const FrameList* found = nullptr;
    if (items.empty()) {
        static const FrameList none;
        found = &none;
    } else if (auto it = byItems_.find(items); it != byItems_.end()) {
        found = &it->second;
    } else {
        // First sight of these frame dicts: frames()'s reading, refusing where it would fail.
        const Path nowhere;
        std::vector<SnapshotFrame> frames;
        frames.reserve(items.size());
        for (const PyRef item : items) {
            if (t_.kind(item) != PyKind::Dict) return false;
            const Fields f = fields(item, nowhere);
            SnapshotFrame frame;
            if (f.has(kFilename)) {
                if (t_.kind(f[kFilename]) != PyKind::Str) return false;
                frame.filename = t_.text(f[kFilename]);
            }
            if (f.has(kLine)) {
                if (t_.kind(f[kLine]) != PyKind::Int) return false;
                frame.line = informative(f[kLine], nowhere);
            }
            if (f.has(kName)) {
                if (t_.kind(f[kName]) != PyKind::Str) return false;
                frame.name = t_.text(f[kName]);
            }
            frames.push_back(std::move(frame));
        }
        found = &remember(items, std::move(frames));
    }
    if (!out.sharesWith(*found)) out = *found;
    if (ref >= framesByRef_.size()) framesByRef_.resize(t_.size());
    framesByRef_[ref] = KnownFrames{*found, true};
    return true;
}

const SharedString& Converter::sharedText(PyRef ref) {
    const uint32_t index = t_.index(ref);
    if (index >= sharedByText_.size()) sharedByText_.resize(t_.textCount());
    SharedString& s = sharedByText_[index];
    if (s.empty() && !t_.text(ref).empty()) s = shared(ref, Path{});
    return s;
}

SnapshotBlock Converter::block(const Fields& f, const Path& path) {
    SnapshotBlock b;
    b.size = u64(required(f, kSize, path), path.child("size"));
    b.state = str(required(f, kState, path), path.child("state"));
    if (f.has(kAddress)) {
        b.address = u64(f[kAddress], path.child("address"));
        checkRange(b.address, f[kAddress], path.child("address"), b.size, f[kSize], path.child("size"));
    }
    if (f.has(kRequestedSize)) b.requested_size = u64(f[kRequestedSize], path.child("requested_size"));
    if (f.has(kFrames)) b.frames = frames(f[kFrames], path.child("frames"));
    return b;
}

SnapshotSegment Converter::segment(PyRef ref, const Path& path) {
    const Fields f = fields(ref, path);
    SnapshotSegment s;
    s.address = u64(required(f, kAddress, path), path.child("address"));
    s.total_size = u64(required(f, kTotalSize, path), path.child("total_size"));
    checkRange(s.address, f[kAddress], path.child("address"), s.total_size, f[kTotalSize], path.child("total_size"));
    if (f.has(kDevice)) {
        s.device = i64(f[kDevice], path.child("device"));
        // The import gives each device its own run from this field; -1 is kept for host segments.
        if (s.device < -1) {
            fail("negative device " + std::to_string(s.device) +
                     " (a segment's device is a CUDA device ordinal, or -1 for host memory)",
                 path.child("device"), f[kDevice]);
        }
    }
    if (f.has(kAllocatedSize)) s.allocated_size = u64(f[kAllocatedSize], path.child("allocated_size"));
    if (f.has(kActiveSize)) s.active_size = u64(f[kActiveSize], path.child("active_size"));
    if (f.has(kRequestedSize)) s.requested_size = u64(f[kRequestedSize], path.child("requested_size"));
    if (f.has(kStream)) s.stream = bits64(f[kStream], path.child("stream"));
    if (f.has(kSegmentType)) s.segment_type = str(f[kSegmentType], path.child("segment_type"));
    if (f.has(kSegmentPoolId)) s.segment_pool_id = pair(f[kSegmentPoolId], path.child("segment_pool_id"));
    if (f.has(kIsExpandable)) s.is_expandable = boolean(f[kIsExpandable], path.child("is_expandable"));
    if (f.has(kFrames)) s.frames = frames(f[kFrames], path.child("frames"));
    if (f.has(kBlocks)) {
        const Path bp = path.child("blocks");
        const PyItems items = list(f[kBlocks], bp);
        // Files before PyTorch 2.1 have no block addresses: blocks tile the segment in order.
        uint64_t running = s.address;
        s.blocks.reserve(items.size());
        for (size_t i = 0; i < items.size(); ++i) {
            const Path p = bp.at(i);
            const Fields bf = fields(items[i], p);
            SnapshotBlock b = block(bf, p);
            if (!bf.has(kAddress)) {
                b.address = running;
                checkRange(b.address, kAbsent, p, b.size, bf[kSize], p.child("size"));
            }
            running = b.address + b.size;
            s.blocks.push_back(std::move(b));
        }
    }
    return s;
}

TraceEntry Converter::traceEntry(PyRef ref, const Path& path) {
    const Fields f = fields(ref, path);
    TraceEntry e;
    e.action = shared(required(f, kAction, path), path.child("action"));
    if (f.has(kAddr)) {
        e.addr = u64(f[kAddr], path.child("addr"));
        e.has_addr = true;
    }
    if (f.has(kDeviceFree)) {
        e.device_free = u64(f[kDeviceFree], path.child("device_free"));
        e.has_device_free = true;
    }
    if (f.has(kSize)) e.size = u64(f[kSize], path.child("size"));
    if (e.has_addr && f.has(kSize)) checkRange(e.addr, f[kAddr], path.child("addr"), e.size, f[kSize], path.child("size"));
    if (f.has(kStream)) e.stream = bits64(f[kStream], path.child("stream"));
    if (f.has(kTimeUs)) {
        const std::optional<int64_t> time = informative(f[kTimeUs], path.child("time_us"));
        e.time_us = time.value_or(0);
        e.time_us_unknown = !time;
    }
    if (f.has(kFrames)) e.frames = frames(f[kFrames], path.child("frames"));
    if (f.has(kCompileContext)) e.compile_context = shared(f[kCompileContext], path.child("compile_context"));
    if (f.has(kUserMetadata)) e.user_metadata = shared(f[kUserMetadata], path.child("user_metadata"));
    if (f.has(kPoolId)) {
        e.pool_id = pair(f[kPoolId], path.child("pool_id"));
        e.has_pool_id = true;
    }
    return e;
}

bool Converter::decodedEntry(std::span<const DecodedField> pairs, TraceEntry& e) {
    // The fields traceEntry() reads, found as fields() finds them (the last pair of a key wins).
    static constexpr Key kRead[] = {kAction, kAddr, kDeviceFree, kSize, kStream, kTimeUs, kFrames, kCompileContext, kUserMetadata, kPoolId};
    std::array<const DecodedField*, kKeyCount> at;
    bool sameKeys = pairs.size() == lastKeys_.size();
    for (size_t i = 0; sameKeys && i < pairs.size(); ++i) sameKeys = pairs[i].key == lastKeys_[i];
    if (sameKeys) {
        for (const Key k : kRead) at[k] = lastAt_[k] == kNotAt ? nullptr : &pairs[lastAt_[k]];
    } else {
        for (const Key k : kRead) at[k] = nullptr;
        for (const DecodedField& pair : pairs) {
            const uint8_t k = keyOfRef(pair.key);
            if (k == kNotStr) return false;
            if (k != kUnknownKey) at[k] = &pair;
        }
        lastKeys_.clear();
        for (const DecodedField& pair : pairs) lastKeys_.push_back(pair.key);
        for (const Key k : kRead) lastAt_[k] = at[k] == nullptr ? kNotAt : static_cast<size_t>(at[k] - pairs.data());
    }
    const auto isStr = [&](const DecodedField* f) { return f->value != DecodedEntries::kInlineInt && t_.kind(f->value) == PyKind::Str; };
    // An int's bits and sign, wherever it is held; false for any other value.
    const auto intOf = [&](const DecodedField* f, uint64_t& bits, bool& negative) {
        if (f->value == DecodedEntries::kInlineInt) {
            bits = f->bits;
            negative = f->negative;
            return true;
        }
        if (t_.kind(f->value) != PyKind::Int) return false;
        bits = t_.bits(f->value);
        negative = t_.negative(f->value);
        return true;
    };
    // u64(): a size or address, never negative.
    const auto sizeOf = [&](const DecodedField* f, uint64_t& out) {
        bool negative = false;
        return intOf(f, out, negative) && !negative;
    };
    if (at[kPoolId] != nullptr) return false;
    if (at[kAction] == nullptr || !isStr(at[kAction])) return false;
    e.action = sharedText(at[kAction]->value);
    e.has_addr = at[kAddr] != nullptr;
    e.addr = 0;
    if (e.has_addr && !sizeOf(at[kAddr], e.addr)) return false;
    e.has_device_free = at[kDeviceFree] != nullptr;
    e.device_free = 0;
    if (e.has_device_free && !sizeOf(at[kDeviceFree], e.device_free)) return false;
    e.size = 0;
    if (at[kSize] != nullptr && !sizeOf(at[kSize], e.size)) return false;
    // checkRange(): [addr, addr + size) inside the 64-bit address space.
    if (e.has_addr && at[kSize] != nullptr && e.size != 0 && e.addr > std::numeric_limits<uint64_t>::max() - (e.size - 1)) {
        return false;
    }
    bool negative = false;
    e.stream = 0;
    if (at[kStream] != nullptr && !intOf(at[kStream], e.stream, negative)) return false;
    e.time_us = 0;
    e.time_us_unknown = false;
    if (at[kTimeUs] != nullptr) {
        // informative(): a time that does not fit int64 is unknown.
        uint64_t bits = 0;
        if (!intOf(at[kTimeUs], bits, negative)) return false;
        e.time_us_unknown = !negative && bits > static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
        e.time_us = e.time_us_unknown ? 0 : static_cast<int64_t>(bits);
    }
    if (at[kFrames] != nullptr) {
        if (at[kFrames]->value == DecodedEntries::kInlineInt || !framesIfValid(at[kFrames]->value, e.frames)) return false;
    } else if (!e.frames.empty()) {
        e.frames = FrameList();
    }
    static const SharedString none;
    if (at[kCompileContext] != nullptr && !isStr(at[kCompileContext])) return false;
    e.compile_context = at[kCompileContext] != nullptr ? sharedText(at[kCompileContext]->value) : none;
    if (at[kUserMetadata] != nullptr && !isStr(at[kUserMetadata])) return false;
    e.user_metadata = at[kUserMetadata] != nullptr ? sharedText(at[kUserMetadata]->value) : none;
    e.pool_id = {0, 0};
    e.has_pool_id = false;
    return true;
}

AllocatorSettings Converter::settings(PyRef ref, const Path& path) {
    const Fields f = fields(ref, path);
    AllocatorSettings s;
    s.present = true;
    if (f.has(kConf)) s.conf = str(f[kConf], path.child("PYTORCH_CUDA_ALLOC_CONF"));
    if (f.has(kMaxSplitSize)) {
        // PyTorch casts SIZE_MAX ("unlimited") to int64, giving -1; a writer that kept it unsigned
        // gives 2^64-1. Both mean unlimited, so keep the 64-bit pattern as int64.
        s.max_split_size = static_cast<int64_t>(bits64(f[kMaxSplitSize], path.child("max_split_size")));
    }
    if (f.has(kGcThreshold)) {
        s.garbage_collection_threshold = number(f[kGcThreshold], path.child("garbage_collection_threshold"));
    }
    if (f.has(kExpandableSegments)) {
        s.expandable_segments = boolean(f[kExpandableSegments], path.child("expandable_segments"));
    }
    if (f.has(kPinnedThreads)) {
        s.pinned_num_register_threads = i64(f[kPinnedThreads], path.child("pinned_num_register_threads"));
    }
    if (f.has(kReleaseLock)) {
        s.release_lock_on_cudamalloc = boolean(f[kReleaseLock], path.child("release_lock_on_cudamalloc"));
    }
    if (f.has(kPinnedHostRegister)) {
        s.pinned_use_cuda_host_register = boolean(f[kPinnedHostRegister], path.child("pinned_use_cuda_host_register"));
    }
    if (f.has(kGraphCaptureReuse)) {
        s.graph_capture_record_stream_reuse =
            boolean(f[kGraphCaptureReuse], path.child("graph_capture_record_stream_reuse"));
    }
    if (f.has(kMaxRoundThreshold)) s.max_round_threshold = i64(f[kMaxRoundThreshold], path.child("max_round_threshold"));
    if (f.has(kMaxCachedSize)) s.max_cached_size = i64(f[kMaxCachedSize], path.child("max_cached_size"));
    if (f.has(kRoundup)) {
        const Path rp = path.child("roundup_power2_divisions");
        const PyItems kv = t_.items(dict(f[kRoundup], rp));
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

Annotation Converter::annotation(PyRef ref, const Path& path) {
    const Fields f = fields(ref, path);
    Annotation a;
    if (f.has(kName)) a.name = str(f[kName], path.child("name"));
    if (f.has(kStage)) a.stage = str(f[kStage], path.child("stage"));
    if (f.has(kDevice)) a.device = informative(f[kDevice], path.child("device"));
    if (f.has(kTimeUs)) a.time_us = informative(f[kTimeUs], path.child("time_us"));
    return a;
}

Snapshot Converter::snapshot() {
    Snapshot snap;
    const Path top;
    const PyRef root = t_.root;
    if (t_.kind(root) == PyKind::List) {  // the oldest form: a bare list of segments
        const PyItems segs = t_.items(root);
        snap.segments.reserve(segs.size());
        for (size_t i = 0; i < segs.size(); ++i) snap.segments.push_back(segment(segs[i], top.at(i)));
        return snap;
    }
    if (t_.kind(root) != PyKind::Dict) {
        fail(std::string("top level is ") + PyTree::kindName(t_.kind(root)) +
                 ", expected a dict (a PyTorch memory snapshot)",
             top, root);
    }
    const Fields f = fields(root, top);
    if (!f.has(kSegments)) fail("missing key 'segments': not a PyTorch memory snapshot", top, root);
    const Path sp = top.child("segments");
    const PyItems segs = list(f[kSegments], sp);
    snap.segments.reserve(segs.size());
    for (size_t i = 0; i < segs.size(); ++i) snap.segments.push_back(segment(segs[i], sp.at(i)));

    if (f.has(kDeviceTraces)) {
        const Path dp = top.child("device_traces");
        const PyItems devices = list(f[kDeviceTraces], dp);
        snap.device_traces.resize(devices.size());
        for (size_t dev = 0; dev < devices.size(); ++dev) {
            const Path devPath = dp.at(dev);
            const PyItems entries = list(devices[dev], devPath);
            snap.device_traces[dev].reserve(entries.size());
            for (size_t i = 0; i < entries.size(); ++i) {
                snap.device_traces[dev].push_back(traceEntry(entries[i], devPath.at(i)));
            }
        }
    }
    if (f.has(kAllocatorSettings)) snap.allocator_settings = settings(f[kAllocatorSettings], top.child("allocator_settings"));
    if (f.has(kExternalAnnotations)) {
        const Path ap = top.child("external_annotations");
        const PyItems items = list(f[kExternalAnnotations], ap);
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

PyTree SnapshotReader::parse(std::string_view bytes) {
    return detect(bytes) == Encoding::Json ? JsonReader::read(bytes) : PickleReader::read(bytes);
}

Snapshot SnapshotReader::read(std::string_view bytes) { return fromTree(parse(bytes)); }

Snapshot SnapshotReader::readFile(const std::string& path) { return read(FileBytes::read(path)); }

namespace {

// Converts each batch of entries while its values are still in the tree, and hands them on.
class EntryStream final : public TraceBatchSink {
public:
    explicit EntryStream(SnapshotEntrySink& out) : out_(out) {}
    void onEntries(const PyTree& tree, size_t device, size_t first, PyItems entries) override {
        if (!converter_) converter_ = std::make_unique<Converter>(tree, true);
        const Path top;
        const Path traces = top.child("device_traces");
        const Path list = traces.at(device);
        for (size_t i = 0; i < entries.size(); ++i) out_.onEntry(device, first + i, converter_->traceEntry(entries[i], list.at(first + i)));
    }
    bool onDecodedEntries(const PyTree& tree, size_t device, size_t first, const DecodedEntries& entries) override {
        if (!converter_) converter_ = std::make_unique<Converter>(tree, true);
        // All converted before any is handed on: refusing one must leave nothing handed on.
        if (decoded_.size() < entries.size()) decoded_.resize(entries.size());
        for (size_t i = 0; i < entries.size(); ++i) {
            if (!converter_->decodedEntry(entries.entry(i), decoded_[i])) return false;
        }
        for (size_t i = 0; i < entries.size(); ++i) out_.onEntry(device, first + i, decoded_[i]);
        return true;
    }
    void forget(PyRef firstRef, size_t firstText) override {
        if (converter_) converter_->forget(firstRef, firstText);
    }
    void onProgress(uint64_t bytesRead, uint64_t totalBytes) override { out_.onProgress(bytesRead, totalBytes); }
    ColdBytes* coldBytes() override { return out_.coldBytes(); }

private:
    SnapshotEntrySink& out_;
    std::unique_ptr<Converter> converter_;
    std::vector<TraceEntry> decoded_;  // onDecodedEntries()'s, reused: their shared parts mostly stay
};

}  // namespace

Snapshot SnapshotReader::readStreaming(const std::string& path, SnapshotEntrySink& entries) {
    EntryStream stream(entries);
    const PyTree tree = PickleReader::readFile(path, &stream);
    Snapshot rest = fromTree(tree);
    // A device list the stream did not recognise (not where Python's pickler puts it) is still in
    // the tree: hand its entries on too, so that every entry reaches the sink.
    for (size_t device = 0; device < rest.device_traces.size(); ++device) {
        std::vector<TraceEntry>& left = rest.device_traces[device];
        for (size_t i = 0; i < left.size(); ++i) entries.onEntry(device, i, left[i]);
        std::vector<TraceEntry>().swap(left);
    }
    return rest;
}

Snapshot SnapshotReader::fromTree(const PyTree& tree) {
    if (tree.size() == 0) throw FormatError("empty value tree", "top level");
    Converter converter(tree);
    return converter.snapshot();
}

}  // namespace allocscope::formats
