#pragma once
// The two ways a test reads a snapshot pickle into traces, and their comparison: the streaming
// read (issue #18) and its fast path must give exactly what the whole-file read gives.
#include <exception>
#include <string>
#include <vector>

#include "allocator/replay/RecordedTrace.h"
#include "storage/formats/FormatError.h"

namespace allocscope::testing {

// The streamed traces, straight from the reader (no fall-back to a whole read can hide a failure).
std::vector<alloc::RecordedTrace> streamedTraces(const std::string& path);
// The traces of the file read whole.
std::vector<alloc::RecordedTrace> wholeTraces(const std::string& path);
// "" when equal (headers, entries, stacks, phases, final segments); else the first difference.
std::string traceDifference(const std::vector<alloc::RecordedTrace>& a, const std::vector<alloc::RecordedTrace>& b);

// The error a read throws, as its text: "<none>" when it reads the file, "not a FormatError: ..."
// for any other exception (a read must report bad input as a FormatError that says where).
template <typename Read>
std::string formatErrorOf(Read read) {
    try {
        read();
    } catch (const formats::FormatError& e) {
        return e.what();
    } catch (const std::exception& e) {
        return std::string("not a FormatError: ") + e.what();
    }
    return "<none>";
}

}  // namespace allocscope::testing
