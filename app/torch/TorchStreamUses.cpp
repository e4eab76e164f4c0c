#include "app/torch/TorchStreamUses.h"

#include <algorithm>
#include <stdexcept>

#ifdef ALLOCSCOPE_HAVE_CUDA
#include "allocator/device/cuda/StreamFreeQueue.h"
#define ALLOCSCOPE_TORCH_STREAM_QUEUE 1
#endif

namespace allocscope::torchabi {

#ifdef ALLOCSCOPE_TORCH_STREAM_QUEUE
class TorchStreamUses::Queue {
public:
    explicit Queue(int device) : queue(device) {}
    alloc::StreamFreeQueue queue;
};
bool TorchStreamUses::supported() { return true; }
#else
class TorchStreamUses::Queue {};
bool TorchStreamUses::supported() { return false; }
#endif

TorchStreamUses::TorchStreamUses([[maybe_unused]] int device) {
#ifdef ALLOCSCOPE_TORCH_STREAM_QUEUE
    queue_ = std::make_unique<Queue>(device);
#else
    throw std::runtime_error("this liballocscope_torch was built without the CUDA backend: it cannot wait for real streams");
#endif
}

TorchStreamUses::~TorchStreamUses() = default;

void TorchStreamUses::allocated(std::uint64_t address, alloc::StreamId stream) { streamOf_[address] = stream; }

void TorchStreamUses::used(std::uint64_t address, alloc::StreamId stream) {
    const auto own = streamOf_.find(address);
    if (own == streamOf_.end() || own->second == stream) return;
    std::vector<std::uint64_t>& streams = uses_[address];
    if (std::find(streams.begin(), streams.end(), stream) == streams.end()) streams.push_back(stream);
}

void TorchStreamUses::freed(std::uint64_t address) {
    streamOf_.erase(address);
    const auto uses = uses_.find(address);
    if (uses == uses_.end()) return;
#ifdef ALLOCSCOPE_TORCH_STREAM_QUEUE
    queue_->queue.insert(address, uses->second.data(), uses->second.size());
#endif
    uses_.erase(uses);
}

void TorchStreamUses::poll([[maybe_unused]] const Done& done) {
#ifdef ALLOCSCOPE_TORCH_STREAM_QUEUE
    queue_->queue.poll(done);
#endif
}

void TorchStreamUses::drain([[maybe_unused]] const Done& done) {
#ifdef ALLOCSCOPE_TORCH_STREAM_QUEUE
    queue_->queue.drain(done);
#endif
}

bool TorchStreamUses::empty() const {
#ifdef ALLOCSCOPE_TORCH_STREAM_QUEUE
    return queue_->queue.empty();
#else
    return true;
#endif
}

}  // namespace allocscope::torchabi
