#pragma once
// The innermost Python frames of the calling thread, when it holds the GIL, for the stack of an
// allocation made from Python. The CPython C API is looked up in the running process (dlsym):
// the library links no libpython and loads in a process without Python, where (as in a thread
// without the GIL) there are simply no frames.
#include <cstddef>

#include "allocator/core/StackTable.h"

namespace allocscope::torchabi {

class PythonFrames {
public:
    static constexpr std::size_t kMaxFrames = 6;

    // Whether the process has the CPython API this needs (looked up once).
    static bool available();
    // Innermost first; empty without Python or without the GIL.
    static alloc::Stack capture();
};

}  // namespace allocscope::torchabi
