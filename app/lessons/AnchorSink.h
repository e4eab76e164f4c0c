#pragma once
// Remembers, per op, where its events are in the stream, so a lesson step can name "the peak" or
// "op 246" and the GUI can move the scrubber to that event of the recorded run.
#include "allocator/core/EventSink.h"
#include "app/lessons/LessonResult.h"

namespace allocscope::app {

class AnchorSink final : public alloc::EventSink {
public:
    explicit AnchorSink(RunAnchors& anchors, std::size_t ops = 0);
    void onEvent(const alloc::Event& e) override;

private:
    void grow(std::size_t ops);
    RunAnchors& anchors_;
};

}  // namespace allocscope::app
