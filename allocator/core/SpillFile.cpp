#include "allocator/core/SpillFile.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <system_error>
#include <vector>

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <unistd.h>

namespace allocscope::alloc {
namespace {

constexpr std::size_t kPage = 4096;  // madvise works on whole pages; larger pages are multiples

std::size_t roundUp(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

bool inMemoryFileSystem(const char* dir) {
    struct statfs fs {};
    return ::statfs(dir, &fs) == 0 && (fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC);
}

// $TMPDIR when set (the user's choice, even a tmpfs). Otherwise /tmp, unless /tmp is a tmpfs (as
// on many desktops): a file there lives in memory, which is what spilling is meant to spare, so
// /var/tmp (meant for big temporary files, on disk) is taken when it is not one.
std::string tempDir() {
    const char* dir = std::getenv("TMPDIR");
    if (dir != nullptr && *dir != '\0') return dir;
    if (inMemoryFileSystem("/tmp") && ::access("/var/tmp", W_OK) == 0 && !inMemoryFileSystem("/var/tmp")) return "/var/tmp";
    return "/tmp";
}

// An open file in `dir` that has no name. -1 when none can be made.
int anonymousFile(const std::string& dir) {
#ifdef O_TMPFILE
    const int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0) return fd;
#endif
    // The file system cannot make unnamed files: a named one, unlinked before anything else.
    std::string pattern = dir + "/allocscope-spill-XXXXXX";
    std::vector<char> path(pattern.begin(), pattern.end());
    path.push_back('\0');
    const int named = ::mkostemp(path.data(), O_CLOEXEC);
    if (named < 0) return -1;
    ::unlink(path.data());
    return named;
}

}  // namespace

std::unique_ptr<SpillFile> SpillFile::create(std::size_t reserve) {
    std::string dir = tempDir();
    const int fd = anonymousFile(dir);
    if (fd < 0) return nullptr;
    try {
        return std::unique_ptr<SpillFile>(new SpillFile(fd, std::move(dir), reserve));
    } catch (const std::exception&) {
        return nullptr;  // no address space for it: ~SpillFile closed the file
    }
}

SpillFile::SpillFile(int fd, std::string dir, std::size_t reserve) : fd_(fd), dir_(std::move(dir)) {
    try {
        reserveAddresses(std::max<std::size_t>(reserve, kGrowBytes));
    } catch (...) {
        ::close(fd_);
        throw;
    }
}

SpillFile::~SpillFile() {
    stopPreparing();
    if (base_ != nullptr) ::munmap(base_, reserved_);
    ::close(fd_);
}

// A range of address space that nothing may touch (PROT_NONE, no memory committed), with the
// mapped part of the file moved into it.
void SpillFile::reserveAddresses(std::size_t bytes) {
    const std::lock_guard<std::mutex> lock(mapMutex_);
    bytes = roundUp(bytes, kGrowBytes);
    // One huge page more than needed, so that the range can start on a huge-page boundary (the
    // kernel usually aligns a range this big anyway; this makes sure); the slack either side goes.
    void* range = ::mmap(nullptr, bytes + kReleaseBytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (range == MAP_FAILED) throw std::runtime_error("no address space for a temporary file of " + std::to_string(bytes >> 20) + " MiB");
    auto* start = static_cast<std::byte*>(range);
    auto* base = reinterpret_cast<std::byte*>(roundUp(reinterpret_cast<std::uintptr_t>(start), kReleaseBytes));
    const auto head = static_cast<std::size_t>(base - start);  // < kReleaseBytes
    if (head > 0) ::munmap(start, head);
    ::munmap(base + bytes, kReleaseBytes - head);
    std::byte* const old = base_;
    base_ = base;
    if (mapped_ > 0 && !mapRange(0, mapped_)) {
        const int error = errno;
        ::munmap(base, bytes);
        base_ = old;
        throw std::runtime_error(std::string("cannot map a temporary file: ") + std::strerror(error));
    }
    if (old != nullptr) ::munmap(old, reserved_);
    reserved_ = bytes;
}

bool SpillFile::mapRange(std::size_t from, std::size_t to) {
    if (::mmap(base_ + from, to - from, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd_, static_cast<off_t>(from)) == MAP_FAILED) {
        return false;
    }
#ifdef MADV_HUGEPAGE
    // A hint: where huge pages cannot be had (no THP, a file system without large folios) the
    // kernel refuses or ignores it, and the file is mapped in 4 KiB pages as before.
    ::madvise(base_ + from, to - from, MADV_HUGEPAGE);
#endif
    return true;
}

void SpillFile::grow(std::size_t bytes) {
    if (bytes <= mapped_) return;
    const std::size_t target = roundUp(bytes, kGrowBytes);
    if (target > reserved_) reserveAddresses(std::max(target, 2 * reserved_));
    // Blocks first: writing a page of a mapping the disk has no room for would raise SIGBUS.
    const int error = ::posix_fallocate(fd_, static_cast<off_t>(mapped_), static_cast<off_t>(target - mapped_));
    if (error != 0) {
        throw std::runtime_error("no room for " + std::to_string(target >> 20) + " MiB of temporary data in " + dir_ +
                                 " (set TMPDIR to a directory on a disk with more room): " + std::strerror(error));
    }
    const std::lock_guard<std::mutex> lock(mapMutex_);
    if (!mapRange(mapped_, target)) throw std::runtime_error(std::string("cannot map a temporary file: ") + std::strerror(errno));
    mapped_ = target;
}

std::size_t SpillFile::release(std::size_t from, std::size_t to) const {
    const std::size_t begin = roundUp(from, kReleaseBytes);
    const std::size_t end = std::min(to, mapped_) / kReleaseBytes * kReleaseBytes;
    if (begin >= end) return from;
    // The pages' contents stay in the file: MADV_DONTNEED on a shared mapping only unmaps them.
    ::madvise(base_ + begin, end - begin, MADV_DONTNEED);
    return end;
}

void SpillFile::prepare(std::size_t from, std::size_t to) {
#ifdef MADV_POPULATE_WRITE
    {
        const std::lock_guard<std::mutex> lock(mapMutex_);
        if (cannotPrepare_ || stopping_) return;
        prepareFrom_ = roundUp(from, kPage);
        prepareTo_ = std::max(prepareFrom_, std::min(to, mapped_) / kPage * kPage);
    }
    if (!preparer_.joinable()) {
        try {
            preparer_ = std::thread([this] { prepareLoop(); });
        } catch (const std::system_error&) {
            const std::lock_guard<std::mutex> lock(mapMutex_);
            cannotPrepare_ = true;  // no thread to spare: the writer faults its pages in itself
            return;
        }
    }
    wake_.notify_one();
#else
    (void)from;
    (void)to;
#endif
}

void SpillFile::dropAhead(std::size_t from) {
    // Under the lock: no slice is being faulted in, and none is left to be.
    const std::lock_guard<std::mutex> lock(mapMutex_);
    prepareFrom_ = prepareTo_ = 0;
    const std::size_t begin = roundUp(from, kPage);
    if (begin < mapped_) ::madvise(base_ + begin, mapped_ - begin, MADV_DONTNEED);
}

void SpillFile::prepareLoop() {
#ifdef MADV_POPULATE_WRITE
    std::unique_lock<std::mutex> lock(mapMutex_);
    while (true) {
        wake_.wait(lock, [this] { return stopping_ || prepareFrom_ < prepareTo_; });
        if (stopping_) return;
        // One slice at a time, so that grow() and a newer request wait for a slice at most.
        constexpr std::size_t kSlice = 1ull << 20;
        const std::size_t from = prepareFrom_;
        const std::size_t to = std::min(prepareTo_, from + kSlice);
        prepareFrom_ = to;
        if (::madvise(base_ + from, to - from, MADV_POPULATE_WRITE) != 0 && (errno == EINVAL || errno == ENOSYS)) {
            cannotPrepare_ = true;  // an older kernel: nothing to gain, stop asking
            return;
        }
        // Other errors (a page the kernel could not fault in now) only lose the head start.
    }
#endif
}

void SpillFile::stopPreparing() {
    {
        const std::lock_guard<std::mutex> lock(mapMutex_);
        stopping_ = true;
    }
    wake_.notify_one();
    if (preparer_.joinable()) preparer_.join();
}

}  // namespace allocscope::alloc
