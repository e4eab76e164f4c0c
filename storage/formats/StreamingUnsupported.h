#pragma once
// Thrown by a streaming snapshot read (PickleReader::readFile with a TraceBatchSink) when the file
// refers back to a value the reader has already converted and dropped: a trace entry dict
// referenced twice through the pickle memo, or a shared value changed after it was shared. PyTorch
// never writes that; a caller reads such a file whole instead (TraceFile does). Not a FormatError:
// the file may be perfectly valid.
#include <stdexcept>
#include <string>

namespace allocscope::formats {

class StreamingUnsupported : public std::runtime_error {
public:
    explicit StreamingUnsupported(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace allocscope::formats
