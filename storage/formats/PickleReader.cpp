#include "storage/formats/PickleReader.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <sys/stat.h>

#include "storage/formats/EntryBatchDecoder.h"
#include "storage/formats/FormatError.h"
#include "storage/formats/PickleMemo.h"
#include "storage/formats/ReadAhead.h"
#include "storage/formats/StreamingUnsupported.h"
#include "storage/formats/TraceBatchSink.h"
#include "storage/formats/TreeCompactor.h"
#include "storage/formats/Utf8.h"

namespace allocscope::formats {
namespace {

std::string hexByte(uint8_t b) {
    static const char* digits = "0123456789abcdef";
    return std::string("0x") + digits[b >> 4] + digits[b & 15];
}

// How much of the file the fast path may look at for one batch of trace entries
// (EntryBatchDecoder), and the blocks a file is read in (ReadAhead). A refill puts what is left of
// the window (less than a fast window, unless an operand is longer) in the next block's headroom.
constexpr uint64_t kFastWindow = uint64_t{512} << 10;
constexpr size_t kBlockBytes = size_t{1} << 20;
constexpr size_t kBlockHeadroom = static_cast<size_t>(kFastWindow);  // what a refill keeps is less

// The input: all of it in memory (read), or a file fetched through a bounded buffer (readFile).
// Opcodes and operands are read from the window [cur_, end_); fetch() slides it along the file.
class Machine {
public:
    explicit Machine(std::string_view bytes)
        : cur_(reinterpret_cast<const unsigned char*>(bytes.data())), end_(cur_ + bytes.size()), start_(cur_),
          size_(bytes.size()) {}
    Machine(FILE* file, uint64_t size, TraceBatchSink* sink)
        : file_(file), size_(size), ahead_(std::make_unique<ReadAhead>(file, size, kBlockBytes, kBlockHeadroom)),
          sink_(sink) {
        if (sink_) {
            if (ColdBytes* cold = sink_->coldBytes()) memo_.useColdBytes(*cold);
            compactor_ = std::make_unique<TreeCompactor>(tree_);
            decoder_ = std::make_unique<EntryBatchDecoder>(tree_, memo_, *compactor_, memoTouched_);
        }
    }

    PyTree run();

private:
    [[noreturn]] void fail(const std::string& what) const {
        throw FormatError(what, "byte " + std::to_string(opOffset_));
    }
    const char* opName() const { return PickleReader::opcodeName(op_); }

    uint64_t pos() const { return base_ + static_cast<uint64_t>(cur_ - start_); }
    uint64_t left() const { return size_ - pos(); }
    // Makes at least n bytes (n <= left()) available at cur_.
    void fetch(uint64_t n);

    // Operand bytes: checked against what is really left, so a declared length past the end
    // fails here before anything is allocated.
    const unsigned char* take(uint64_t n) {
        if (n > left()) {
            fail(std::string("pickle truncated: ") + opName() + " needs " + std::to_string(n) +
                 " more bytes, only " + std::to_string(left()) + " left");
        }
        if (static_cast<uint64_t>(end_ - cur_) < n) {
            fetch(n);
            if (static_cast<uint64_t>(end_ - cur_) < n) {
                fail(std::string("pickle truncated: ") + opName() + " needs " + std::to_string(n) + " more bytes, only " +
                     std::to_string(end_ - cur_) + " left");
            }
        }
        const unsigned char* p = cur_;
        cur_ += n;
        return p;
    }
    uint64_t takeLE(unsigned width) {
        const unsigned char* p = take(width);
        uint64_t v = 0;
        for (unsigned i = 0; i < width; ++i) v |= uint64_t(p[i]) << (8 * i);
        return v;
    }

    // The part of the stack above the innermost MARK is what an opcode may pop.
    size_t visible() const { return stack_.size() - (marks_.empty() ? 0 : marks_.back()); }
    void need(size_t n) {
        if (visible() < n) {
            fail(std::string("stack underflow: ") + opName() + " needs " + std::to_string(n) +
                 " value(s) on the stack, found " + std::to_string(visible()));
        }
    }
    PyRef pop() {
        need(1);
        PyRef r = stack_.back();
        stack_.pop_back();
        return r;
    }
    // Pops the innermost MARK; returns where the values pushed since then start on the stack.
    // Callers consume stack_[from, end) in place: no temporary vector per dict or list.
    size_t popMark() {
        if (marks_.empty()) fail(std::string(opName()) + " without a preceding MARK");
        const size_t m = marks_.back();
        marks_.pop_back();
        return m;
    }
    // Like need(), for the part of the stack below position `top`.
    void needBelow(size_t top, size_t n) {
        const size_t base = marks_.empty() ? 0 : marks_.back();
        if (top - base < n) {
            fail(std::string("stack underflow: ") + opName() + " needs " + std::to_string(n) +
                 " value(s) on the stack, found " + std::to_string(top - base));
        }
    }

    void pushString(uint64_t length, bool unicode);
    void pushLong(uint64_t length);
    // Each moves stack_[from, end) into the container and shrinks the stack to `from`.
    void setItems(PyRef dict, size_t from);
    void appendItems(PyRef list, size_t from);
    PyRef makeContainer(PyKind kind, size_t from);
    void memoGet(uint64_t index);
    void memoPut(uint64_t index);
    [[noreturn]] void refuse();
    // Streaming (a sink): a container about to be filled may not be one that stands for several.
    void beforeFill(PyRef container);
    // Streaming: whether the list at stack_[listPos] is device_traces[device], where Python's
    // pickler puts it.
    bool deviceListAt(size_t listPos, size_t& device) const;
    // Streaming: when the list at stack_[listPos] is a device_traces[d] list, hands the items
    // stack_[from, end) to the sink as its next entries, drops them and returns true.
    bool streamEntries(size_t listPos, size_t from);
    // Streaming, at a MARK on a device_traces[d] list: reads the batch of entries up to its APPENDS
    // with the fast path (EntryBatchDecoder) and hands them on. False (nothing done) when the fast
    // path does not apply: the MARK is then read the generic way.
    bool fastBatch();
    void compact();

    const unsigned char* cur_ = nullptr;
    const unsigned char* end_ = nullptr;
    const unsigned char* start_ = nullptr;  // the window's first byte, at file offset base_
    uint64_t base_ = 0;
    FILE* file_ = nullptr;
    std::vector<unsigned char> buffer_;  // the window when it could not be one of ahead_'s blocks
    uint64_t size_ = 0;
    std::unique_ptr<ReadAhead> ahead_;   // reads the file beside the parser
    ReadAhead::Block block_;             // the block the window is in
    uint64_t opOffset_ = 0;
    uint8_t op_ = 0;
    PyTree tree_;
    std::vector<PyRef> stack_;
    std::vector<size_t> marks_;
    PickleMemo memo_;

    // Streaming state: values below mark_ stay; those made since are dropped at the next batch
    // unless the stack or the memo still holds them (TreeCompactor).
    TraceBatchSink* sink_ = nullptr;
    std::unique_ptr<TreeCompactor> compactor_;
    PyTree::Mark mark_;
    std::vector<uint64_t> memoTouched_;      // memo indices stored since mark_
    std::vector<PyRef> dropped_;             // converted entry dicts since mark_
    bool olderFilled_ = false;              // a container older than mark_ was filled since
    std::vector<size_t> streamed_;          // entries handed over, by device
    std::unique_ptr<EntryBatchDecoder> decoder_;
    unsigned fastMisses_ = 0;               // batches in a row the fast path gave back
    uint64_t fastTries_ = 0;
};

void Machine::fetch(uint64_t n) {
    if (file_ == nullptr) return;  // in memory: take() checked against left() already
    const size_t keep = static_cast<size_t>(end_ - cur_);
    base_ += static_cast<uint64_t>(cur_ - start_);  // the window will start at cur_
    ReadAhead::Block next = ahead_->next();
    if (next.size > 0 && keep <= next.headroom && keep + next.size >= n) {
        // The usual case: what is left of the window goes right before the next block's data.
        unsigned char* at = next.data() - keep;
        if (keep > 0) std::memmove(at, cur_, keep);
        ahead_->giveBack(std::move(block_));
        block_ = std::move(next);
        start_ = at;
        end_ = at + keep + block_.size;
    } else {
        // An operand longer than a block (a long string), or the end of the file: one piece.
        std::vector<unsigned char> joined;
        joined.reserve(std::max<size_t>(static_cast<size_t>(std::min<uint64_t>(n, size_ - base_)), keep + next.size));
        joined.insert(joined.end(), cur_, end_);
        while (next.size > 0) {
            joined.insert(joined.end(), next.data(), next.data() + next.size);
            ahead_->giveBack(std::move(next));
            if (joined.size() >= n) break;
            next = ahead_->next();
        }
        ahead_->giveBack(std::move(block_));
        block_ = ReadAhead::Block{};
        buffer_.swap(joined);
        start_ = buffer_.data();
        end_ = start_ + buffer_.size();
    }
    cur_ = start_;
    const size_t have = static_cast<size_t>(end_ - start_);
    if (have < n) {
        if (!ahead_->error().empty()) throw FormatError("cannot read the file: " + ahead_->error(), "byte " + std::to_string(pos()));
        // The file became shorter while it was read: what is there is all there is.
        size_ = base_ + have;
    }
    if (sink_) sink_->onProgress(base_ + have, size_);
}

void Machine::pushString(uint64_t length, bool unicode) {
    const unsigned char* p = take(length);
    std::string text(reinterpret_cast<const char*>(p), length);
    if (unicode) {
        const size_t bad = Utf8::firstInvalid(text);
        if (bad != std::string_view::npos) {
            fail(std::string("invalid UTF-8 in ") + opName() + " string at byte " +
                 std::to_string(pos() - length + bad));
        }
        stack_.push_back(tree_.addStr(std::move(text), opOffset_));
    } else {
        stack_.push_back(tree_.addBytes(std::move(text), opOffset_));
    }
}

// LONG1/LONG4: little-endian two's complement of `length` bytes. We keep [-2^63, 2^64-1]: every
// value a snapshot can hold (uint64 sizes and pointers, int64 devices and -1 sentinels).
void Machine::pushLong(uint64_t length) {
    const unsigned char* p = take(length);
    if (length == 0) {
        stack_.push_back(tree_.addInt(0, false, opOffset_));
        return;
    }
    const bool negative = (p[length - 1] & 0x80) != 0;
    const unsigned char fill = negative ? 0xFF : 0x00;
    for (uint64_t i = 8; i < length; ++i) {
        if (p[i] != fill) fail("integer does not fit in 64 bits (snapshots hold values up to 2^64-1)");
    }
    uint64_t bits = 0;
    for (uint64_t i = 0; i < 8; ++i) {
        const uint64_t byte = i < length ? p[i] : fill;
        bits |= byte << (8 * i);
    }
    if (negative && (bits >> 63) == 0) fail("integer does not fit in 64 bits (below -2^63)");
    stack_.push_back(tree_.addInt(bits, negative, opOffset_));
}

void Machine::beforeFill(PyRef container) {
    if (container >= mark_.nodes) return;
    if (compactor_->frozen(container)) throw StreamingUnsupported("the pickle fills a list it shared before");
    olderFilled_ = true;
}

bool Machine::deviceListAt(size_t listPos, size_t& device) const {
    // The shape Python's pickler gives a snapshot: the top-level dict (its MARK at 1), then
    // key, value, ... 'device_traces', the outer list, and the device lists being built.
    if (marks_.empty() || marks_.front() != 1 || tree_.kind(stack_[0]) != PyKind::Dict) return false;
    if (listPos < 3 || listPos >= stack_.size() || tree_.kind(stack_[listPos]) != PyKind::List) return false;
    size_t outer = listPos - 1;
    while (outer >= 2 && tree_.kind(stack_[outer]) == PyKind::List && tree_.kind(stack_[outer - 1]) == PyKind::List) --outer;
    if (outer < 2 || outer == listPos || tree_.kind(stack_[outer]) != PyKind::List || (outer - 2) % 2 != 0) return false;
    const PyRef key = stack_[outer - 1];
    if (tree_.kind(key) != PyKind::Str || tree_.text(key) != "device_traces") return false;
    device = tree_.items(stack_[outer]).size() + (listPos - outer - 1);
    return true;
}

bool Machine::streamEntries(size_t listPos, size_t from) {
    size_t device = 0;
    if (!deviceListAt(listPos, device)) return false;
    if (streamed_.size() <= device) streamed_.resize(device + 1, 0);
    const PyItems entries(stack_.data() + from, stack_.size() - from);
    sink_->onEntries(tree_, device, streamed_[device], entries);
    streamed_[device] += entries.size();
    for (const PyRef entry : entries) {
        if (entry >= mark_.nodes) dropped_.push_back(entry);
    }
    stack_.resize(from);
    compact();
    return true;
}

bool Machine::fastBatch() {
    // A file whose entries the fast path keeps giving back (a shape it does not know) is tried
    // only now and then, so that it costs the generic read little.
    ++fastTries_;
    if (fastMisses_ >= 8 && fastTries_ % 64 != 0) return false;
    size_t device = 0;
    if (stack_.empty() || !deviceListAt(stack_.size() - 1, device)) return false;
    // The batch must lie in the window: a batch of 1,000 entries takes about 100 KB.
    const uint64_t want = std::min<uint64_t>(kFastWindow, left());
    if (static_cast<uint64_t>(end_ - cur_) < want) fetch(want);
    const unsigned char* after = decoder_->decode(cur_, end_, pos(), size_, mark_.nodes);
    if (after == nullptr) {
        ++fastMisses_;
        return false;
    }
    if (streamed_.size() <= device) streamed_.resize(device + 1, 0);
    if (!sink_->onDecodedEntries(tree_, device, streamed_[device], decoder_->batch())) {
        decoder_->undo();
        ++fastMisses_;
        return false;
    }
    fastMisses_ = 0;
    streamed_[device] += decoder_->batch().size();
    cur_ = after;
    compact();
    return true;
}

void Machine::compact() {
    const PyTree::Mark now = tree_.mark();
    if (!olderFilled_ && memoTouched_.empty() && dropped_.empty() && now.nodes == mark_.nodes && now.strings == mark_.strings &&
        now.spans == mark_.spans && now.flat == mark_.flat && now.spilled == mark_.spilled) {
        return;  // nothing made since the mark (a batch the fast path read): nothing to drop
    }
    if (olderFilled_) {
        // A container older than the mark got items since: truncating would lose them. Keep
        // everything made so far (correct, only not smaller) and start again from here.
        olderFilled_ = false;
    } else {
        sink_->forget(static_cast<PyRef>(mark_.nodes), mark_.strings);
        std::vector<PyRef*> stackRoots;
        stackRoots.reserve(stack_.size());
        for (PyRef& ref : stack_) stackRoots.push_back(&ref);
        std::vector<PyRef*> memoRoots;
        memoRoots.reserve(memoTouched_.size());
        for (const uint64_t index : memoTouched_) {
            if (PyRef* slot = memo_.slot(index)) memoRoots.push_back(slot);
        }
        compactor_->compact(mark_, stackRoots, memoRoots, dropped_);
    }
    mark_ = tree_.mark();
    memoTouched_.clear();
    dropped_.clear();
}

void Machine::setItems(PyRef dict, size_t from) {
    if (sink_) beforeFill(dict);
    if (tree_.kind(dict) != PyKind::Dict) {
        fail(std::string(opName()) + " into " + PyTree::kindName(tree_.kind(dict)) + ", not a dict");
    }
    if ((stack_.size() - from) % 2 != 0) fail(std::string(opName()) + " with an odd number of keys and values");
    for (size_t i = from; i < stack_.size(); i += 2) {
        const PyKind k = tree_.kind(stack_[i]);
        if (k == PyKind::List || k == PyKind::Dict) {
            fail(std::string("unhashable dict key (") + PyTree::kindName(k) + ")");
        }
    }
    tree_.append(dict, PyItems(stack_.data() + from, stack_.size() - from));
    stack_.resize(from);
}

void Machine::appendItems(PyRef list, size_t from) {
    if (sink_) beforeFill(list);
    if (tree_.kind(list) != PyKind::List) {
        fail(std::string(opName()) + " to " + PyTree::kindName(tree_.kind(list)) + ", not a list");
    }
    tree_.append(list, PyItems(stack_.data() + from, stack_.size() - from));
    stack_.resize(from);
}

PyRef Machine::makeContainer(PyKind kind, size_t from) {
    const PyRef c = tree_.addContainer(kind, opOffset_);
    tree_.append(c, PyItems(stack_.data() + from, stack_.size() - from));
    stack_.resize(from);
    return c;
}

void Machine::memoGet(uint64_t index) {
    PyRef ref = 0;
    if (!memo_.get(index, ref)) fail("memo index " + std::to_string(index) + " was never stored");
    if (ref == TreeCompactor::kDropped) {
        throw StreamingUnsupported("the pickle refers twice to a trace entry (memo index " + std::to_string(index) + ")");
    }
    stack_.push_back(ref);
}

void Machine::memoPut(uint64_t index) {
    need(1);
    memo_.put(index, stack_.back());
    if (sink_) memoTouched_.push_back(index);
}

void Machine::refuse() {
    const std::string name = opName();
    switch (op_) {
    case 'c': case 0x93: case 'R': case 'b': case 0x81: case 0x92: case 'i': case 'o':
    case 0x82: case 0x83: case 0x84: case 'P': case 'Q':
        fail("opcode " + name + " (" + hexByte(op_) +
             ") would import or construct a Python object; a memory snapshot is plain data, so it "
             "is refused (is this a torch.save file rather than a snapshot?)");
    case 0x97: case 0x98:
        fail("opcode " + name + " (" + hexByte(op_) + ") refers to an out-of-band buffer; refused");
    case 0x8f: case 0x90: case 0x91:
        fail("opcode " + name + " (" + hexByte(op_) + ") builds a set; snapshots contain no sets");
    case 'I': case 'L': case 'S': case 'T': case 'U': case 'V': case 'F': case 'g': case 'p':
        fail("protocol 0/1 text opcode " + name + " (" + hexByte(op_) +
             ") is not supported; write the snapshot with pickle protocol 2 to 5");
    default:
        break;
    }
    if (!name.empty()) fail("opcode " + name + " (" + hexByte(op_) + ") is not supported");
    fail("unknown pickle opcode " + hexByte(op_) + " (not a pickle, or corrupted)");
}

PyTree Machine::run() {
    while (true) {
        opOffset_ = pos();
        if (cur_ == end_) {
            if (left() > 0) fetch(1);
            if (cur_ == end_) fail(size_ == 0 ? "empty input: not a pickle" : "pickle truncated: no STOP opcode before end of file");
        }
        op_ = *cur_++;
        switch (op_) {
        case 0x80: {  // PROTO
            const uint64_t v = takeLE(1);
            if (v < 2 || v > 5) fail("unsupported pickle protocol " + std::to_string(v) + " (2 to 5 are read)");
            break;
        }
        case 0x95: {  // FRAME: a framing hint; the declared frame must exist
            const uint64_t n = takeLE(8);
            if (n > left()) {
                fail("FRAME declares " + std::to_string(n) + " bytes but only " + std::to_string(left()) +
                     " follow (the file is cut short or corrupted)");
            }
            break;
        }
        case '.': {  // STOP
            tree_.root = pop();
            return std::move(tree_);
        }
        case '(':
            if (sink_ && fastBatch()) break;
            marks_.push_back(stack_.size());
            break;
        case '0': pop(); break;
        case '1': stack_.resize(popMark()); break;
        case '2': need(1); stack_.push_back(stack_.back()); break;
        case '}': stack_.push_back(tree_.addContainer(PyKind::Dict, opOffset_)); break;
        case ']': stack_.push_back(tree_.addContainer(PyKind::List, opOffset_)); break;
        case ')': stack_.push_back(tree_.addContainer(PyKind::Tuple, opOffset_)); break;
        case 'd': {  // DICT (mark-based)
            const size_t m = popMark();
            const PyRef d = tree_.addContainer(PyKind::Dict, opOffset_);
            setItems(d, m);
            stack_.push_back(d);
            break;
        }
        case 'l': {  // LIST (mark-based)
            const size_t m = popMark();
            stack_.push_back(makeContainer(PyKind::List, m));
            break;
        }
        case 't': {
            const size_t m = popMark();
            stack_.push_back(makeContainer(PyKind::Tuple, m));
            break;
        }
        case 0x85: case 0x86: case 0x87: {  // TUPLE1..3
            const size_t n = op_ - 0x84u;
            need(n);
            stack_.push_back(makeContainer(PyKind::Tuple, stack_.size() - n));
            break;
        }
        case 's': {  // SETITEM
            need(3);
            setItems(stack_[stack_.size() - 3], stack_.size() - 2);
            break;
        }
        case 'u': {  // SETITEMS
            const size_t m = popMark();
            needBelow(m, 1);
            setItems(stack_[m - 1], m);
            break;
        }
        case 'a': {  // APPEND
            need(2);
            if (sink_ && streamEntries(stack_.size() - 2, stack_.size() - 1)) break;
            appendItems(stack_[stack_.size() - 2], stack_.size() - 1);
            break;
        }
        case 'e': {  // APPENDS
            const size_t m = popMark();
            needBelow(m, 1);
            if (sink_ && streamEntries(m - 1, m)) break;
            appendItems(stack_[m - 1], m);
            break;
        }
        case 0x8c: pushString(takeLE(1), true); break;  // SHORT_BINUNICODE
        case 'X': pushString(takeLE(4), true); break;   // BINUNICODE
        case 0x8d: pushString(takeLE(8), true); break;  // BINUNICODE8
        case 'C': pushString(takeLE(1), false); break;  // SHORT_BINBYTES
        case 'B': pushString(takeLE(4), false); break;  // BINBYTES
        case 0x8e: case 0x96: pushString(takeLE(8), false); break;  // BINBYTES8, BYTEARRAY8
        case 'K': stack_.push_back(tree_.addInt(takeLE(1), false, opOffset_)); break;
        case 'M': stack_.push_back(tree_.addInt(takeLE(2), false, opOffset_)); break;
        case 'J': {  // BININT: signed 32-bit
            const auto v = static_cast<int32_t>(static_cast<uint32_t>(takeLE(4)));
            stack_.push_back(tree_.addInt(static_cast<uint64_t>(static_cast<int64_t>(v)), v < 0, opOffset_));
            break;
        }
        case 0x8a: pushLong(takeLE(1)); break;  // LONG1
        case 0x8b: {                             // LONG4: the byte count is a signed int32
            const auto n = static_cast<int32_t>(static_cast<uint32_t>(takeLE(4)));
            if (n < 0) fail("LONG4 with a negative byte count");
            pushLong(static_cast<uint64_t>(n));
            break;
        }
        case 'G': {  // BINFLOAT: big-endian IEEE double
            const unsigned char* p = take(8);
            uint64_t bits = 0;
            for (int i = 0; i < 8; ++i) bits = (bits << 8) | p[i];
            double v = 0;
            std::memcpy(&v, &bits, sizeof v);
            stack_.push_back(tree_.addFloat(v, opOffset_));
            break;
        }
        case 'N': stack_.push_back(tree_.addNone(opOffset_)); break;
        case 0x88: stack_.push_back(tree_.addBool(true, opOffset_)); break;
        case 0x89: stack_.push_back(tree_.addBool(false, opOffset_)); break;
        case 0x94: memoPut(memo_.count()); break;  // MEMOIZE
        case 'q': memoPut(takeLE(1)); break;       // BINPUT
        case 'r': memoPut(takeLE(4)); break;       // LONG_BINPUT
        case 'h': memoGet(takeLE(1)); break;       // BINGET
        case 'j': memoGet(takeLE(4)); break;       // LONG_BINGET
        default: refuse();
        }
    }
}

}  // namespace

PyTree PickleReader::read(std::string_view bytes) {
    Machine machine(bytes);
    return machine.run();
}

PyTree PickleReader::readFile(const std::string& path, TraceBatchSink* sink) {
    // stdio rather than iostreams: a clear errno for the message, and no locale in the way.
    std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!file) throw FormatError(std::string("cannot open file: ") + std::strerror(errno), path);
    struct stat info {};
    if (::fstat(::fileno(file.get()), &info) != 0 || !S_ISREG(info.st_mode)) {
        throw FormatError("not a regular file", path);
    }
    Machine machine(file.get(), static_cast<uint64_t>(info.st_size), sink);
    return machine.run();
}

const char* PickleReader::opcodeName(uint8_t op) {
    switch (op) {
    case '(': return "MARK";
    case '.': return "STOP";
    case '0': return "POP";
    case '1': return "POP_MARK";
    case '2': return "DUP";
    case 'F': return "FLOAT";
    case 'I': return "INT";
    case 'J': return "BININT";
    case 'K': return "BININT1";
    case 'L': return "LONG";
    case 'M': return "BININT2";
    case 'N': return "NONE";
    case 'P': return "PERSID";
    case 'Q': return "BINPERSID";
    case 'R': return "REDUCE";
    case 'S': return "STRING";
    case 'T': return "BINSTRING";
    case 'U': return "SHORT_BINSTRING";
    case 'V': return "UNICODE";
    case 'X': return "BINUNICODE";
    case 'a': return "APPEND";
    case 'b': return "BUILD";
    case 'c': return "GLOBAL";
    case 'd': return "DICT";
    case '}': return "EMPTY_DICT";
    case 'e': return "APPENDS";
    case 'g': return "GET";
    case 'h': return "BINGET";
    case 'i': return "INST";
    case 'j': return "LONG_BINGET";
    case 'l': return "LIST";
    case ']': return "EMPTY_LIST";
    case 'o': return "OBJ";
    case 'p': return "PUT";
    case 'q': return "BINPUT";
    case 'r': return "LONG_BINPUT";
    case 's': return "SETITEM";
    case 't': return "TUPLE";
    case ')': return "EMPTY_TUPLE";
    case 'u': return "SETITEMS";
    case 'G': return "BINFLOAT";
    case 'B': return "BINBYTES";
    case 'C': return "SHORT_BINBYTES";
    case 0x80: return "PROTO";
    case 0x81: return "NEWOBJ";
    case 0x82: return "EXT1";
    case 0x83: return "EXT2";
    case 0x84: return "EXT4";
    case 0x85: return "TUPLE1";
    case 0x86: return "TUPLE2";
    case 0x87: return "TUPLE3";
    case 0x88: return "NEWTRUE";
    case 0x89: return "NEWFALSE";
    case 0x8a: return "LONG1";
    case 0x8b: return "LONG4";
    case 0x8c: return "SHORT_BINUNICODE";
    case 0x8d: return "BINUNICODE8";
    case 0x8e: return "BINBYTES8";
    case 0x8f: return "EMPTY_SET";
    case 0x90: return "ADDITEMS";
    case 0x91: return "FROZENSET";
    case 0x92: return "NEWOBJ_EX";
    case 0x93: return "STACK_GLOBAL";
    case 0x94: return "MEMOIZE";
    case 0x95: return "FRAME";
    case 0x96: return "BYTEARRAY8";
    case 0x97: return "NEXT_BUFFER";
    case 0x98: return "READONLY_BUFFER";
    default: return "";
    }
}

}  // namespace allocscope::formats
