#include "app/lessons/AnchorSink.h"

namespace allocscope::app {

AnchorSink::AnchorSink(RunAnchors& anchors, std::size_t ops) : anchors_(anchors) {
    anchors_ = RunAnchors{};
    grow(ops);
}

void AnchorSink::grow(std::size_t ops) {
    // A replay learns its op count only as it goes: grow on demand.
    if (ops <= anchors_.opFirstEvent.size()) return;
    anchors_.opFirstEvent.resize(ops, RunAnchors::kNone);
    anchors_.opLastEvent.resize(ops, RunAnchors::kNone);
    anchors_.opAddress.resize(ops, 0);
}

void AnchorSink::onEvent(const alloc::Event& e) {
    anchors_.events = e.seq + 1;
    if (e.opIndex >= anchors_.opFirstEvent.size()) grow(std::max<std::size_t>(e.opIndex + 1, anchors_.opFirstEvent.size() * 2));
    if (anchors_.opFirstEvent[e.opIndex] == RunAnchors::kNone) anchors_.opFirstEvent[e.opIndex] = e.seq;
    anchors_.opLastEvent[e.opIndex] = e.seq;
    if (e.action == alloc::EventAction::Alloc && anchors_.opAddress[e.opIndex] == 0) anchors_.opAddress[e.opIndex] = e.address;
    if (e.action == alloc::EventAction::Oom && anchors_.firstOomEvent == RunAnchors::kNone) anchors_.firstOomEvent = e.seq;
}

}  // namespace allocscope::app
