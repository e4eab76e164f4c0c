#pragma once
// An append-mostly array of plain values that moves into a temporary file once it passes
// spillFromBytes() (issue #18: the entries of a big snapshot's trace and, while it is read, their
// times and the pickle memo's old chunks; the ops of the program made from it). Below
// that it is ordinary memory. Past it, the values live in a SpillFile mapped at one address: the
// pages the writer has filled leave memory as it goes on, and the pages a reader has passed leave
// it when the reader says so (forget(), or a Walk), so what stays resident is a window, whatever
// the array's length. Nothing else changes for a reader: operator[] is a plain index, iterators
// are pointers, and a reference stays valid until the next push_back/reserve that grows the
// array (as with std::vector); a forgotten page is read back from the file when touched again.
//
// T must be trivially copyable: values are moved as bytes. Not for concurrent writers; readers
// of a finished array may share it across threads (forget() never changes a value).
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "allocator/core/SpillFile.h"

namespace allocscope::alloc {

// The size from which a SpillArray moves to a temporary file. Tests set a tiny one to force the
// file on small traces; set it before the arrays it should apply to grow.
std::size_t spillFromBytes();
void setSpillFromBytes(std::size_t bytes);

template <class T>
class SpillArray {
    static_assert(std::is_trivially_copyable_v<T>, "SpillArray moves its values as bytes");

public:
    using value_type = T;
    using iterator = T*;
    using const_iterator = const T*;
    using size_type = std::size_t;
    using reference = T&;
    using const_reference = const T&;

    SpillArray() = default;
    SpillArray(std::initializer_list<T> values) { append(values.begin(), values.end()); }
    SpillArray(const SpillArray& other) { copyFrom(other); }
    SpillArray(SpillArray&& other) noexcept { swap(other); }
    SpillArray& operator=(const SpillArray& other) {
        if (this != &other) {
            clear();
            copyFrom(other);
        }
        return *this;
    }
    SpillArray& operator=(SpillArray&& other) noexcept {
        SpillArray(std::move(other)).swap(*this);
        return *this;
    }
    SpillArray& operator=(std::initializer_list<T> values) {
        assign(values.begin(), values.end());
        return *this;
    }
    SpillArray& operator=(const std::vector<T>& values) {
        assign(values.data(), values.data() + values.size());
        return *this;
    }
    ~SpillArray() { freeMemory(); }

    void swap(SpillArray& other) noexcept {
        std::swap(data_, other.data_);
        std::swap(size_, other.size_);
        std::swap(capacity_, other.capacity_);
        std::swap(file_, other.file_);
        std::swap(releasedTo_, other.releasedTo_);
        std::swap(releaseAt_, other.releaseAt_);
    }

    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    std::size_t capacity() const { return capacity_; }
    // Whether the values live in a temporary file (false: in memory).
    bool spilled() const { return file_ != nullptr; }

    T& operator[](std::size_t i) { return data_[i]; }
    const T& operator[](std::size_t i) const { return data_[i]; }
    T& at(std::size_t i) { return data_[check(i)]; }
    const T& at(std::size_t i) const { return data_[check(i)]; }
    T& front() { return data_[0]; }
    const T& front() const { return data_[0]; }
    T& back() { return data_[size_ - 1]; }
    const T& back() const { return data_[size_ - 1]; }
    T* data() { return data_; }
    const T* data() const { return data_; }
    T* begin() { return data_; }
    T* end() { return data_ + size_; }
    const T* begin() const { return data_; }
    const T* end() const { return data_ + size_; }

    void push_back(const T& value) {
        if (size_ == capacity_) grow(size_ + 1);
        std::memcpy(static_cast<void*>(data_ + size_), &value, sizeof(T));
        ++size_;
        if (size_ == releaseAt_) releaseWritten();
    }
    // As std::vector's, but a spilled array only holds address space for n values: its values
    // do not move while it grows up to n; its file grows as values arrive.
    void reserve(std::size_t n) {
        if (n > capacity_) grow(n, true);
    }
    void clear() {
        size_ = 0;
        if (file_) {
            releasedTo_ = 0;
            releaseAt_ = std::max<std::size_t>(1, kWindowBytes / sizeof(T));
        }
    }
    template <class It>
    void append(It first, It last) {
        for (; first != last; ++first) push_back(*first);
    }
    template <class It>
    void assign(It first, It last) {
        clear();
        reserve(static_cast<std::size_t>(std::distance(first, last)));
        append(first, last);
    }
    // Removes [first, last) (tests cut traces with it; not for big arrays).
    T* erase(const T* first, const T* last) {
        T* to = data_ + (first - data_);
        const std::size_t tail = static_cast<std::size_t>(end() - last);
        std::memmove(static_cast<void*>(to), last, tail * sizeof(T));
        size_ -= static_cast<std::size_t>(last - first);
        return to;
    }

    // The writer is done for now: the pages faulted in ahead of it (SpillFile::prepare) leave
    // memory, so a finished array keeps none resident (a later push_back still works).
    void doneWriting() const {
        if (file_) file_->dropAhead(size_ * sizeof(T));
    }

    // Says that [begin, end) will not be read again soon: its pages leave memory (a spilled array
    // only; in memory nothing happens). Reading them later is still correct, just slower.
    void forget(std::size_t begin, std::size_t end) const {
        if (file_) file_->release(begin * sizeof(T), std::min(end, size_) * sizeof(T));
    }

    // A reader going through the array (forwards, backwards, or starting over): tell it each
    // index reached, and the range it left behind is forgotten every kWindowBytes.
    class Walk {
    public:
        explicit Walk(const SpillArray& array) : array_(array) {}
        void at(std::size_t i) {
            if (i >= mark_ + stride() || i + stride() <= mark_) {
                // Past the previous mark by a slack of one release unit: a page fault may map the
                // file's whole cached folio around the page it needs (up to 2 MiB), behind the
                // range released last, and release() drops whole units only, so the unit the last
                // release stopped short of is dropped by this one.
                if (i > mark_) array_.forget(mark_ > slack() ? mark_ - slack() : 0, i);
                if (i < mark_) array_.forget(i, mark_ + slack());
                mark_ = i;
            }
        }

    private:
        static constexpr std::size_t stride() { return std::max<std::size_t>(1, kWindowBytes / sizeof(T)); }
        static constexpr std::size_t slack() { return std::max<std::size_t>(1, SpillFile::kReleaseBytes / sizeof(T)); }
        const SpillArray& array_;
        std::size_t mark_ = 0;
    };

    // How much of a spilled array the writer leaves resident behind it, and a Walk's stride.
    static constexpr std::size_t kWindowBytes = 4ull << 20;

private:
    // Appends a copy of `other`, which leaves memory behind the copy (both may be spilled).
    void copyFrom(const SpillArray& other) {
        reserve(size_ + other.size());
        Walk walk(other);
        const std::size_t chunk = std::max<std::size_t>(1, kWindowBytes / sizeof(T));
        for (std::size_t i = 0; i < other.size(); i += chunk) {
            walk.at(i);
            append(other.begin() + i, other.begin() + std::min(other.size(), i + chunk));
        }
    }
    std::size_t check(std::size_t i) const {
        if (i >= size_) throw std::out_of_range("SpillArray index " + std::to_string(i) + " of " + std::to_string(size_));
        return i;
    }

    // Room for at least n values: doubling in memory, then (past spillFromBytes) in the file.
    // `exact`: reserve() asked for n: no doubling in memory; in the file only address space is
    // held for n (the file itself grows as values arrive, kGrowBytes at a time, so a generous
    // guess costs no disk).
    void grow(std::size_t n, bool exact = false) {
        if (n > max_size()) throw std::length_error("SpillArray: too many values");
        std::size_t want = exact ? n : std::max<std::size_t>({n, 2 * capacity_, 16});
        if (!file_ && !exact && want * sizeof(T) > spillFromBytes() && n * sizeof(T) <= spillFromBytes()) {
            // A doubling would pass the threshold but the values do not yet: fill memory up to it
            // first, so only an array that really holds more than spillFromBytes() goes to a file.
            want = std::max(n, spillFromBytes() / sizeof(T));
        }
        if (file_ || want * sizeof(T) > spillFromBytes()) {
            if (!file_) {
                // The address space is reserved generously (no memory is committed for it), so
                // the mapping almost never has to move as the file grows.
                std::unique_ptr<SpillFile> file = SpillFile::create(std::max(n * sizeof(T), kReserveBytes));
                if (file) {
                    file->grow(std::max<std::size_t>(size_, 1) * sizeof(T));
                    if (size_ > 0) std::memcpy(file->data(), static_cast<const void*>(data_), size_ * sizeof(T));
                    freeMemory();
                    file_ = std::move(file);
                    releasedTo_ = 0;
                    releaseWritten();
                }
            }
            if (file_) {
                file_->reserve(n * sizeof(T));
                file_->grow((exact ? std::max<std::size_t>(size_, 1) : n) * sizeof(T));
                data_ = reinterpret_cast<T*>(file_->data());
                capacity_ = file_->size() / sizeof(T);
                return;
            }
            // No temporary file could be made: stay in memory, as without spilling.
        }
        T* bigger = std::allocator<T>().allocate(want);
        if (size_ > 0) std::memcpy(static_cast<void*>(bigger), static_cast<const void*>(data_), size_ * sizeof(T));
        freeMemory();
        data_ = bigger;
        capacity_ = want;
    }
    // The writer's pages more than a window behind it leave memory (they are in the file), and
    // the next two windows are faulted in ahead of it on the file's own thread (SpillFile::prepare).
    void releaseWritten() {
        const std::size_t window = std::max<std::size_t>(1, kWindowBytes / sizeof(T));
        releaseAt_ = size_ + window;
        const std::size_t at = size_ * sizeof(T);
        const std::size_t to = at > kWindowBytes ? at - kWindowBytes : 0;
        // release() drops whole units only: the next one starts where this one stopped.
        if (to > releasedTo_) releasedTo_ = file_->release(releasedTo_, to);
        file_->prepare(at, at + 2 * kWindowBytes);
    }
    // Frees the in-memory values (a spilled array's file goes with file_).
    void freeMemory() {
        if (file_) return;
        if (data_ != nullptr) std::allocator<T>().deallocate(data_, capacity_);
        data_ = nullptr;
        capacity_ = 0;
    }
    static constexpr std::size_t max_size() { return static_cast<std::size_t>(-1) / 2 / sizeof(T); }

    static constexpr std::size_t kReserveBytes = 16ull << 30;

    T* data_ = nullptr;
    std::size_t size_ = 0;
    std::size_t capacity_ = 0;  // in memory: allocated values; spilled: values the mapped file holds
    std::unique_ptr<SpillFile> file_;
    std::size_t releasedTo_ = 0;  // spilled: bytes before this left memory behind the writer
    std::size_t releaseAt_ = static_cast<std::size_t>(-1);  // size at which the writer releases next
};

}  // namespace allocscope::alloc
