#include "storage/formats/ReadAhead.h"

#include <cerrno>
#include <cstring>
#include <utility>

namespace allocscope::formats {

ReadAhead::ReadAhead(std::FILE* file, std::uint64_t limit, std::size_t blockBytes, std::size_t headroom,
                     std::size_t depth)
    : file_(file), left_(limit), blockBytes_(blockBytes), headroom_(headroom), depth_(depth == 0 ? 1 : depth) {
    thread_ = std::thread([this] { run(); });
}

ReadAhead::~ReadAhead() {
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    changed_.notify_all();
    thread_.join();
}

void ReadAhead::run() {
    while (true) {
        std::vector<unsigned char> buffer;
        {
            std::unique_lock<std::mutex> lock(mutex_);
            changed_.wait(lock, [this] { return stopping_ || filled_.size() < depth_; });
            if (stopping_) return;
            if (!spare_.empty()) {
                buffer = std::move(spare_.back());
                spare_.pop_back();
            }
        }
        // Outside the lock: the reader takes filled blocks while this one is read.
        buffer.resize(headroom_ + blockBytes_);
        // A file that grew while it is read is read up to the size it had (the reader's limit).
        const std::size_t want = left_ < blockBytes_ ? static_cast<std::size_t>(left_) : blockBytes_;
        std::size_t have = 0;
        while (have < want) {
            const std::size_t got = std::fread(buffer.data() + headroom_ + have, 1, want - have, file_);
            if (got == 0) break;
            have += got;
        }
        left_ -= have;
        const bool last = have < blockBytes_ || left_ == 0;
        std::string error;
        if (last && std::ferror(file_)) error = std::strerror(errno);
        {
            const std::lock_guard<std::mutex> lock(mutex_);
            if (have > 0) filled_.push_back(Block{std::move(buffer), have, headroom_});
            if (last) {
                error_ = std::move(error);
                finished_ = true;
            }
        }
        changed_.notify_all();
        if (last) return;
    }
}

ReadAhead::Block ReadAhead::next() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return !filled_.empty() || finished_; });
    if (filled_.empty()) return Block{{}, 0, headroom_};
    Block block = std::move(filled_.front());
    filled_.pop_front();
    lock.unlock();
    changed_.notify_all();
    return block;
}

void ReadAhead::giveBack(Block block) {
    if (block.buffer.capacity() < headroom_ + blockBytes_) return;  // not one of ours
    const std::lock_guard<std::mutex> lock(mutex_);
    if (spare_.size() < depth_) spare_.push_back(std::move(block.buffer));
}

}  // namespace allocscope::formats
