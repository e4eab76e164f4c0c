#include "allocator/workloads/RandomMixSource.h"

namespace allocscope::alloc {

namespace {
constexpr StreamId kStreams[3] = {kComputeStream, kCopyStream, kSideStream};
constexpr std::size_t kChunkOps = 65536;
}  // namespace

RandomMixSource::RandomMixSource(const RandomMixSettings& settings, std::uint64_t seed)
    : s_(settings), rng_(seed), builder_("random_mix.py") {
    stacks_[0] = builder_.stack("compute", 10);
    stacks_[1] = builder_.stack("copy", 20);
    stacks_[2] = builder_.stack("side", 30);
    builder_.begin("random mix");
}

void RandomMixSource::freeAt(std::size_t index) {
    const Live t = live_[index];
    live_[index] = live_.back();
    live_.pop_back();
    liveBytes_ -= t.size;
    if (t.use != t.stream) {
        builder_.freeWithUses(t.id, {t.use}, static_cast<std::uint32_t>(rng_.uniform(1, 8)));
    } else {
        builder_.free(t.id);
    }
}

void RandomMixSource::step() {
    const bool full = liveBytes_ >= s_.maxLiveBytes || live_.size() >= s_.maxLiveTensors;
    if (!live_.empty() && (full || !rng_.chance(0.55))) {
        freeAt(static_cast<std::size_t>(rng_.uniform(0, live_.size() - 1)));
        return;
    }
    if (rng_.next() % 20000 == 0) {
        builder_.synchronize();
        return;
    }
    const std::uint64_t size = rng_.chance(s_.smallFraction) ? rng_.logUniform(512, 1ull << 20)
                                                             : rng_.logUniform((1ull << 20) + 1, s_.maxBytes);
    const std::uint64_t pick = rng_.uniform(0, 99);
    const std::size_t si = pick < 60 ? 0 : (pick < 85 ? 1 : 2);
    const StreamId stream = kStreams[si];
    const std::uint64_t id = builder_.alloc(size, stacks_[si], stream);
    StreamId use = stream;
    if (rng_.chance(s_.crossStream)) {
        use = kStreams[(si + 1 + rng_.uniform(0, 1)) % 3];
        builder_.recordStream(id, use);
    }
    live_.push_back(Live{id, size, use, stream});
    liveBytes_ += size;
}

void RandomMixSource::cleanup() {
    while (!live_.empty()) freeAt(live_.size() - 1);
    builder_.synchronize();
    builder_.end("random mix");
}

bool RandomMixSource::nextChunk(std::vector<Op>& out) {
    out.clear();
    if (done_) return false;
    while (builder_.opCount() < kChunkOps && emitted_ + builder_.opCount() < s_.events) step();
    if (emitted_ + builder_.opCount() >= s_.events) {
        cleanup();
        done_ = true;
    }
    builder_.drainOps(out);
    emitted_ += out.size();
    return !out.empty();
}

}  // namespace allocscope::alloc
