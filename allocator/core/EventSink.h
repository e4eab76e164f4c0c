#pragma once
// Where the allocator sends its events. The allocator calls onEvent() synchronously, once per
// decision, in order; a sink must not call back into the allocator.
#include <array>
#include <cstdint>
#include <vector>

#include "allocator/core/Event.h"

namespace allocscope::alloc {

class EventSink {
public:
    virtual ~EventSink() = default;
    virtual void onEvent(const Event& event) = 0;
};

// Counts events per action: the cheapest useful sink (benchmarks, quick summaries).
class CountingSink final : public EventSink {
public:
    void onEvent(const Event& event) override {
        ++counts_[static_cast<std::size_t>(event.action)];
        ++total_;
    }
    std::uint64_t count(EventAction action) const { return counts_[static_cast<std::size_t>(action)]; }
    std::uint64_t total() const { return total_; }

private:
    std::array<std::uint64_t, kEventActionCount> counts_{};
    std::uint64_t total_ = 0;
};

// Keeps every event (tests, replays that compare against a recording).
class VectorSink final : public EventSink {
public:
    void onEvent(const Event& event) override { events.push_back(event); }
    std::vector<Event> events;
};

// Forwards each event to several sinks, in order.
class TeeSink final : public EventSink {
public:
    void add(EventSink* sink) { sinks_.push_back(sink); }
    void onEvent(const Event& event) override {
        for (EventSink* sink : sinks_) sink->onEvent(event);
    }

private:
    std::vector<EventSink*> sinks_;
};

}  // namespace allocscope::alloc
