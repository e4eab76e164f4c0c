#pragma once
// The backing of a SpillArray that has outgrown memory: an anonymous temporary file, mapped into
// one range of address space that does not move while it grows (issue #18: a 5 GB snapshot has
// 57 million trace entries; held in memory, its entries and replay steps alone took 3.6 GB).
//
// Why POSIX calls in allocator/ (DESIGN.md says standard library only): the replay's own arrays
// must be able to leave memory, and only the operating system can page an array out and back in
// without the replay's many readers (forward, backward, prefix re-runs, held references) knowing.
// No file format is involved and no one else ever sees the file; storage/ injecting a backing
// would add an interface for the same few calls. Linux only, like the rest of the build.
//
// Nothing is ever left behind: the file is created with O_TMPFILE (it never has a name), or,
// where the file system lacks that, named by mkstemp and unlinked at once. Its blocks are
// allocated (posix_fallocate) before the mapping covers them, so a full disk is an exception
// here, never a SIGBUS when a page is first written.
//
// Memory: pages of the mapping that were touched count in the process's resident set until
// release() drops them (MADV_DONTNEED); the data stays in the file (the page cache, then the
// disk), and the next access reads it back. The address stays valid: a reference into the
// mapping never dangles, it only costs a page fault once its page was released.
//
// Time: the first write to a page of the file is a page fault that has the kernel zero a new
// page-cache page (the blocks are allocated but unwritten): a quarter of a big import's read,
// which runs on one thread while the other core waits. prepare() has a thread of the file's own
// fault the pages the writer is about to fill, beside the writer (MADV_POPULATE_WRITE).
//
// Huge pages: the mapping starts on a 2 MiB boundary and asks for huge pages (MADV_HUGEPAGE), so
// where the file system caches the file in 2 MiB folios (ext4 and xfs on recent kernels) one
// fault maps 2 MiB and one TLB entry covers it, instead of 512. release() drops only whole,
// aligned 2 MiB units, because dropping part of one splits its mapping into 4 KiB pages for good.
// Page faults are what a big import's passes over these arrays mostly cost on a virtual machine
// (every fault and TLB fill goes through the hypervisor): on the 2-core development VM the 1 GB
// import took 13-22% less CPU time with them (tests/benchmarks/README.md, "Eleventh round").
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace allocscope::alloc {

class SpillFile {
public:
    // A new, empty file in $TMPDIR (unset: /tmp, or /var/tmp when /tmp is a tmpfs) with `reserve`
    // bytes of address space held for it.
    // Null when no temporary file can be made there (a read-only or missing directory): the
    // caller then keeps its data in memory, as it would without spilling.
    static std::unique_ptr<SpillFile> create(std::size_t reserve);
    ~SpillFile();
    SpillFile(const SpillFile&) = delete;
    SpillFile& operator=(const SpillFile&) = delete;

    // Where the file is mapped (moves only when grow() passes the reserved address space).
    std::byte* data() const { return base_; }
    // Bytes of the file that are mapped and may be read and written.
    std::size_t size() const { return mapped_; }
    // Makes the file and its mapping cover at least `bytes` (in steps of kGrowBytes). Throws
    // std::runtime_error when the disk has no room.
    void grow(std::size_t bytes);
    // Holds address space for `bytes` (the file is not grown): the mapping will not move before
    // the file passes that size.
    void reserve(std::size_t bytes) {
        if (bytes > reserved_) reserveAddresses(bytes);
    }
    // Drops the whole kReleaseBytes units (aligned to the file's start) that lie inside [from, to)
    // from memory; their data stays in the file. What is left either side stays resident.
    // Returns where a release that goes on from here should start: the end of the last unit
    // dropped, or `from` when none was.
    std::size_t release(std::size_t from, std::size_t to) const;
    // Asks for the pages of [from, to) (clamped to size()) to be made present and writable soon,
    // on the file's own thread (started on the first call): the writer that reaches them finds
    // them ready instead of faulting each one in. A newer request replaces one not yet started;
    // nothing changes in the file's contents. Where the kernel cannot (before Linux 5.14) it
    // stops asking.
    void prepare(std::size_t from, std::size_t to);
    // The writer stopped at `from`: a request not yet carried out is dropped, and the pages from
    // there on that prepare() faulted in leave memory (they hold nothing yet).
    void dropAhead(std::size_t from);

    static constexpr std::size_t kGrowBytes = 64ull << 20;
    // A huge page: the alignment of the mapping and the unit release() drops.
    static constexpr std::size_t kReleaseBytes = 2ull << 20;

private:
    SpillFile(int fd, std::string dir, std::size_t reserve);
    void reserveAddresses(std::size_t bytes);
    // Maps [from, to) of the file at base_ + from (the caller holds mapMutex_).
    bool mapRange(std::size_t from, std::size_t to);
    void prepareLoop();
    void stopPreparing();

    int fd_ = -1;
    std::string dir_;            // for error messages
    std::byte* base_ = nullptr;  // reserved_ bytes of address space; the first mapped_ map the file
    std::size_t reserved_ = 0;
    std::size_t mapped_ = 0;

    // prepare()'s thread. mapMutex_ is held while it touches the mapping and while grow() or
    // reserveAddresses() change it, so it never faults in a range that is being moved.
    std::mutex mapMutex_;
    std::condition_variable wake_;
    std::thread preparer_;
    std::size_t prepareFrom_ = 0, prepareTo_ = 0;  // the pending request ([from, to), empty: none)
    bool stopping_ = false;
    bool cannotPrepare_ = false;
};

}  // namespace allocscope::alloc
