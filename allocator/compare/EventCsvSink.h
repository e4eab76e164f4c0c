#pragma once
// Writes the allocator's event stream as CSV, one line per event, in a fixed format (so the same
// program and config give byte-identical files):
//   seq,op,action,address,size,rounded_size,stream,segment,pool,cause,stack
#include <ostream>

#include "allocator/core/EventSink.h"

namespace allocscope::alloc {

class EventCsvSink final : public EventSink {
public:
    explicit EventCsvSink(std::ostream& out);  // writes the header line at once
    void onEvent(const Event& event) override;

private:
    std::ostream& out_;
};

}  // namespace allocscope::alloc
