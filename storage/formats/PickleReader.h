#pragma once
// A safe reader for the pickles PyTorch writes as memory snapshots: protocols 2-5, plain data only
// (dict, list, tuple, str, bytes, int, float, bool, None). It is a small stack machine over the
// opcode subset of reference §2 and never executes or imports anything: GLOBAL, STACK_GLOBAL,
// REDUCE, BUILD, NEWOBJ, INST, OBJ, EXT*, PERSID and the out-of-band buffer opcodes are refused
// with an error naming the opcode and its byte offset, as are protocol 0/1 text opcodes.
//
// Robustness contract (tests/data/hostile/pickle): every malformed input ends in one FormatError
// whose location is "byte N" (the offset of the offending opcode); nothing recurses on the C++
// stack, so nesting depth is bounded only by memory; declared lengths are checked against the
// bytes that are really there before anything is allocated.
#include <cstdint>
#include <string>
#include <string_view>

#include "storage/formats/PyTree.h"

namespace allocscope::formats {

class TraceBatchSink;

class PickleReader {
public:
    // Parses one pickle (up to its STOP opcode; bytes after STOP are ignored, as Python does).
    // Throws FormatError.
    static PyTree read(std::string_view bytes);

    // The same, reading the file at `path` through a bounded buffer instead of holding it. With a
    // sink, the entries of every `device_traces[d]` list are handed to it in batches as the pickle
    // builds them and dropped from the tree (TraceBatchSink, TreeCompactor): the returned tree has
    // those lists empty. Throws FormatError (a file that cannot be opened: located at `path`), or
    // StreamingUnsupported when the file refers back to a dropped entry (read it whole then).
    static PyTree readFile(const std::string& path, TraceBatchSink* sink = nullptr);

    // The pickle opcode's name ("GLOBAL", "BINUNICODE"), or "" for a byte that is no opcode.
    static const char* opcodeName(uint8_t opcode);
};

}  // namespace allocscope::formats
