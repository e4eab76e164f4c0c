#pragma once
// One use stream's frees that wait for it, oldest first, and the rules that complete them
// (RaceStreams.h says which mechanism marks them). CUDA-free, so the rules are tested without a
// GPU (TestRaceOps); RaceEventQueue supplies the driver calls.
//
// A free is marked where it happens on its stream, by an event or by a counter write: the stream
// writes an increasing number into host-mapped memory, and `reached` is the last number it
// wrote. A stream runs in order, so reaching a number, or completing an event, says every mark
// recorded before it has passed too. Each waiting free keeps `bound`, the smallest number whose
// arrival says the stream has passed it: a counter-marked free's own number; for an event-marked
// one, the number the stream's next counter write will carry (ordered after the event).
#include <cstdint>
#include <deque>

namespace allocscope::gpu {

// Wrap-safe "the stream's counter has reached `bound`" (numbers stay within 2^31 of each other).
inline bool counterPassed(std::uint32_t reached, std::uint32_t bound) { return static_cast<std::int32_t>(reached - bound) >= 0; }

class RaceWaitQueue {
public:
    struct Waiting {
        std::uint64_t event = 0;  // the event's handle; 0: marked by a counter write
        std::uint32_t bound = 0;
        std::uint64_t address = 0;
    };

    bool empty() const { return waiting_.empty(); }
    std::size_t size() const { return waiting_.size(); }
    // The last counter number asked of the stream.
    std::uint32_t issued() const { return issued_; }
    // Mixed mode's choice: write a counter only when the stream has passed the last one, so
    // that at most one write per stream is in flight and the oldest waiting free usually is one.
    bool counterIdle(std::uint32_t reached) const { return reached == issued_; }

    // A free marked by a counter write; returns the number the caller must have the stream write.
    std::uint32_t pushCounter(std::uint64_t address) {
        waiting_.push_back({0, ++issued_, address});
        return issued_;
    }
    // A free marked by an event (a non-zero handle) the caller recorded on the stream.
    void pushEvent(std::uint64_t event, std::uint64_t address) { waiting_.push_back({event, issued_ + 1, address}); }

    // process_events: completes waiting frees in order, as long as the marks say the stream has
    // passed them. `counted`: the stream writes counters and `reached` is its last number.
    // `tail`: once the oldest event is ready, the newest event recorded before the next counter
    // write (the newest of the frees that share its bound) is asked too, once, and if it is ready
    // every free up to it is complete without more queries. ready(event) asks whether an event
    // completed; done(waiting) takes a completed free (and gives its event back).
    template <typename Ready, typename Done>
    void poll(bool counted, std::uint32_t reached, bool tail, Ready&& ready, Done&& done) {
        std::size_t known = 0;  // this many of the oldest frees are known to be complete
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

    // Forgets every waiting free (the allocator completed them itself); each() sees each one.
    template <typename Each>
    void clear(Each&& each) {
        for (const Waiting& w : waiting_) each(w);
        waiting_.clear();
    }

private:
    // The newest event-marked free with this bound (the front's group), as an index; 0 if the
    // front is the only one.
    std::size_t newestOfGroup(std::uint32_t bound) const {
        std::size_t i = waiting_.size() - 1;
        while (i > 0 && (waiting_[i].event == 0 || waiting_[i].bound != bound)) --i;
        return i;
    }

    std::deque<Waiting> waiting_;
    std::uint32_t issued_ = 0;
};

}  // namespace allocscope::gpu
