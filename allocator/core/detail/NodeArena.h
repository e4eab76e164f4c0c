#pragma once
// Free-list storage for the allocator's small, fixed-size objects (std::set nodes, Blocks,
// Segments). The hot path (malloc/free) inserts and erases set nodes and creates/destroys
// Blocks on every split and merge; recycling them here keeps that path free of heap calls.
#include <cstddef>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace allocscope::alloc::detail {

// Hands out slots of at most kSlotBytes; larger requests go to the heap.
class NodeArena {
public:
    static constexpr std::size_t kSlotBytes = 80;  // a std::set node of FreeEntry is 72
    static constexpr std::size_t kSlotsPerChunk = 1024;

    NodeArena() = default;
    NodeArena(const NodeArena&) = delete;
    NodeArena& operator=(const NodeArena&) = delete;

    void* allocate(std::size_t bytes) {
        if (bytes > kSlotBytes) return ::operator new(bytes);
        if (free_ != nullptr) {
            FreeSlot* slot = free_;
            free_ = slot->next;
            return slot;
        }
        if (next_ == end_) grow();
        void* slot = next_;
        next_ += kSlotBytes;
        return slot;
    }
    void deallocate(void* pointer, std::size_t bytes) noexcept {
        if (bytes > kSlotBytes) {
            ::operator delete(pointer);
            return;
        }
        auto* slot = static_cast<FreeSlot*>(pointer);
        slot->next = free_;
        free_ = slot;
    }

private:
    struct FreeSlot {
        FreeSlot* next;
    };
    void grow() {
        // operator new[] of std::byte is aligned for any fundamental type (16 bytes).
        chunks_.push_back(std::make_unique<std::byte[]>(kSlotBytes * kSlotsPerChunk));
        next_ = chunks_.back().get();
        end_ = next_ + kSlotBytes * kSlotsPerChunk;
    }

    std::vector<std::unique_ptr<std::byte[]>> chunks_;
    std::byte* next_ = nullptr;
    std::byte* end_ = nullptr;
    FreeSlot* free_ = nullptr;
};

// std::allocator replacement for node containers: single nodes come from the arena.
template <class T>
class ArenaAllocator {
public:
    using value_type = T;
    explicit ArenaAllocator(NodeArena* arena) noexcept : arena_(arena) {}
    template <class U>
    ArenaAllocator(const ArenaAllocator<U>& other) noexcept : arena_(other.arena()) {}  // NOLINT

    T* allocate(std::size_t n) {
        if (n == 1 && sizeof(T) <= NodeArena::kSlotBytes && alignof(T) <= alignof(std::max_align_t)) {
            return static_cast<T*>(arena_->allocate(sizeof(T)));
        }
        return static_cast<T*>(::operator new(n * sizeof(T)));
    }
    void deallocate(T* pointer, std::size_t n) noexcept {
        if (n == 1 && sizeof(T) <= NodeArena::kSlotBytes && alignof(T) <= alignof(std::max_align_t)) {
            arena_->deallocate(pointer, sizeof(T));
            return;
        }
        ::operator delete(pointer);
    }
    NodeArena* arena() const noexcept { return arena_; }
    template <class U>
    bool operator==(const ArenaAllocator<U>& other) const noexcept { return arena_ == other.arena(); }

private:
    NodeArena* arena_;
};

// Recycles objects of one type: released objects keep their storage (and, for Blocks, the
// capacity of their stream-use vector) for the next acquire().
template <class T>
class ObjectPool {
public:
    ObjectPool() = default;
    ObjectPool(const ObjectPool&) = delete;
    ObjectPool& operator=(const ObjectPool&) = delete;

    T* acquire() {
        if (free_.empty()) {
            all_.push_back(std::make_unique<T>());
            return all_.back().get();
        }
        T* object = free_.back();
        free_.pop_back();
        return object;
    }
    void release(T* object) {
        object->reset();
        free_.push_back(object);
    }
    std::size_t liveCount() const { return all_.size() - free_.size(); }

private:
    std::vector<std::unique_ptr<T>> all_;
    std::vector<T*> free_;
};

}  // namespace allocscope::alloc::detail
