#pragma once
// Reads a file in blocks on a thread of its own, a few blocks ahead of the one reader that takes
// them in order (PickleReader's streaming read).
//
// Why: a big import reads the whole snapshot before its replay can start (the settings and the
// state before the first entry are known only at the end of the file), and that read runs on one
// thread while the second core waits. Copying the file from the page cache into the parser's
// buffer was a tenth of it; here it happens beside the parser.
//
// Each block has `headroom` free bytes in front of its data, so the reader can put the end of
// the previous block (an opcode cut in two) right before it and go on in one piece without moving
// the block. Memory: at most `depth` filled blocks wait, plus the reader's own.
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace allocscope::formats {

class ReadAhead {
public:
    struct Block {
        std::vector<unsigned char> buffer;  // headroom, then the data
        std::size_t size = 0;               // bytes of data (0: the end of the file, or an error)
        unsigned char* data() { return buffer.data() + headroom; }
        std::size_t headroom = 0;
    };

    // Reads at most `limit` bytes of `file` (which must stay open while this lives) from its
    // current position.
    ReadAhead(std::FILE* file, std::uint64_t limit, std::size_t blockBytes, std::size_t headroom, std::size_t depth = 2);
    ~ReadAhead();
    ReadAhead(const ReadAhead&) = delete;
    ReadAhead& operator=(const ReadAhead&) = delete;

    // The next block in file order; waits for it. An empty block: the end of the file, or a read
    // error (error() then says which, as strerror's text).
    Block next();
    // A block the reader is done with: its buffer is filled again (no new allocation).
    void giveBack(Block block);
    const std::string& error() const { return error_; }

private:
    void run();

    std::FILE* file_;
    std::uint64_t left_;  // bytes the thread may still read
    const std::size_t blockBytes_;
    const std::size_t headroom_;
    const std::size_t depth_;

    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<Block> filled_;               // in file order
    std::vector<std::vector<unsigned char>> spare_;
    bool finished_ = false;                  // the thread read its last block (end or error)
    bool stopping_ = false;
    std::string error_;                      // written before finished_ is set
    std::thread thread_;
};

}  // namespace allocscope::formats
