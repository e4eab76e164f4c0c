#pragma once
// One use stream's pending frees, oldest first, and the rules that say which of them the stream
// has passed (StreamFreeQueue: c10's process_events). CUDA-free, so CI tests the rules without
// a GPU (test_stream_free_rules); StreamFreeQueue.cpp supplies the driver calls.
//
// A free is marked where it happens on its use stream, by an event or by a counter write: the
// stream writes an increasing number into host-mapped memory, and `reached` is the last number
// it wrote. A stream runs in order, so reaching a number, or completing an event, says every
// mark recorded before it has passed too. Each waiting mark keeps `bound`, the smallest number
// whose arrival says the stream has passed it: a counter mark's own number; for an event mark,
// the number the stream's next counter write will carry (ordered after the event).
#include <cstddef>
#include <cstdint>
#include <deque>

namespace allocscope::alloc {

// Wrap-safe "the stream's counter has reached `bound`" (numbers stay within 2^31 of each other).
inline bool counterPassed(std::uint32_t reached, std::uint32_t bound) { return static_cast<std::int32_t>(reached - bound) >= 0; }

class StreamWaitList {
public:
    struct Waiting {
        std::uint64_t event = 0;  // the event's handle; 0: marked by a counter write
        std::uint64_t address = 0;
        std::uint32_t bound = 0;
        bool shared = false;  // the block also waits for marks on other streams
    };

    bool empty() const { return waiting_.empty(); }
    std::size_t size() const { return waiting_.size(); }
    // The last counter number asked of the stream.
    std::uint32_t issued() const { return issued_; }
    // The mixed marking's choice: write a counter only when the stream has passed the last one,
    // so that at most one write per stream is in flight and the oldest waiting mark usually is
    // one (a poll then reads a word and stops there instead of asking the driver).
    bool counterIdle(std::uint32_t reached) const { return reached == issued_; }

    // A mark by a counter write; returns the number the caller must have the stream write.
    std::uint32_t pushCounter(std::uint64_t address, bool shared) {
        waiting_.push_back({0, address, ++issued_, shared});
        return issued_;
    }
    // A mark by an event (a non-zero handle) the caller recorded on the stream.
    void pushEvent(std::uint64_t event, std::uint64_t address, bool shared) {
        waiting_.push_back({event, address, issued_ + 1, shared});
    }

    // Completes waiting marks in order, as long as the marks say the stream has passed them.
    // `counted`: the stream writes counters and `reached` is its last number. `tail`: once the
    // oldest event is ready, the newest event recorded before the next counter write (the
    // newest of the marks that share its bound) is asked too, once, and if it is ready every
    // mark up to it has passed without more queries. ready(event) asks whether an event
    // completed; done(waiting) takes a passed mark (and gives its event back).
    template <typename Ready, typename Done>
    void poll(bool counted, std::uint32_t reached, bool tail, Ready&& ready, Done&& done) {
        std::size_t known = 0;  // this many of the oldest marks are known to have passed
        bool asked = false;     // the newest of the front's group was asked (its bound: askedBound)
        std::uint32_t askedBound = 0;
        while (!waiting_.empty()) {
            const Waiting front = waiting_.front();
            if (known == 0 && !(counted && counterPassed(reached, front.bound))) {
                if (front.event == 0) break;  // a counter the stream has not written yet
                if (!ready(front.event)) break;
                known = 1;
                if (tail && !(asked && askedBound == front.bound)) {
                    asked = true;
                    askedBound = front.bound;
                    const std::size_t newest = newestOfGroup(front.bound);
                    if (newest > 0 && ready(waiting_[newest].event)) known = newest + 1;
                }
            }
            waiting_.pop_front();
            if (known > 0) --known;
            done(front);
        }
    }

    // Takes every waiting mark out (the caller waited for the stream); each() sees each one.
    template <typename Each>
    void clear(Each&& each) {
        for (const Waiting& w : waiting_) each(w);
        waiting_.clear();
    }

private:
    // The newest event mark with this bound (the front's group), as an index; 0 if the front is
    // the only one.
    std::size_t newestOfGroup(std::uint32_t bound) const {
        std::size_t i = waiting_.size() - 1;
        while (i > 0 && (waiting_[i].event == 0 || waiting_[i].bound != bound)) --i;
        return i;
    }

    std::deque<Waiting> waiting_;
    std::uint32_t issued_ = 0;
};

}  // namespace allocscope::alloc
