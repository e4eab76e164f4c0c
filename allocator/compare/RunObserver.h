#pragma once
// Follows one native run of ComparisonEngine while it is being measured: every allocator event,
// and the program ops around them. Whatever an observer builds (a session recording, for
// `compare --db`) then comes from the very run the metrics describe, and the program does not
// have to run a second time to produce it.
//
// All calls for one run come from the thread that runs it, in program order. Like any EventSink,
// an observer must not call back into the allocator.
#include <cstdint>

#include "allocator/core/CachingAllocator.h"
#include "allocator/core/EventSink.h"
#include "allocator/core/Op.h"
#include "allocator/core/ProgramRunner.h"

namespace allocscope::alloc {

class RunObserver : public EventSink {
public:
    // Before op `index` is applied: the events it causes follow this call.
    virtual void beforeOp(const Op& op, std::uint64_t index) = 0;
    // After op `index` was applied; not called for an invalid op, which stops the run.
    virtual void afterOp(const Op& op, std::uint64_t index, const CachingAllocator& allocator) = 0;
    // The run is over: every op was applied, or `result.error` says which one stopped it.
    virtual void finish(const CachingAllocator& allocator, const ProgramResult& result) = 0;
};

}  // namespace allocscope::alloc
