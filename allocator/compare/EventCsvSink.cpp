#include "allocator/compare/EventCsvSink.h"

namespace allocscope::alloc {

EventCsvSink::EventCsvSink(std::ostream& out) : out_(out) {
    out_ << "seq,op,action,address,size,rounded_size,stream,segment,pool,cause,stack\n";
}

void EventCsvSink::onEvent(const Event& e) {
    out_ << e.seq << ',' << e.opIndex << ',' << actionName(e.action) << ',' << e.address << ',' << e.size << ','
         << e.roundedSize << ',' << e.stream << ',' << e.segment << ',' << poolName(e.pool) << ','
         << causeName(e.cause) << ',' << e.stackId << '\n';
}

}  // namespace allocscope::alloc
