#pragma once
// The one error of the lesson engine: what is wrong, and where (the lesson file, the key inside
// it, a line and column or a column inside a rule; for a lesson on a trace, the trace file and the
// place inside it), so the CLI can print "allocscope-cli: <what> (<where>)" and the GUI can show
// the same two parts.
//
// It has formats::FormatError's shape, reused rather than repeated: problem(), location() and
// what() == "<what> (<where>)". Its own type lets callers (and the lesson engine itself) tell a
// bad lesson from other bad input.
#include <string>

#include "storage/formats/FormatError.h"

namespace allocscope::app {

class LessonError : public formats::FormatError {
public:
    using formats::FormatError::FormatError;
};

}  // namespace allocscope::app
