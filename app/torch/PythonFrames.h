#pragma once
// The innermost Python frames of the calling thread, for the stack of an allocation made from
// Python: read under the GIL, which a Python thread that released it around a PyTorch op takes
// back for the read (as PyTorch's record_memory_history does; the price is in the README). The CPython C API is looked up in the running process (dlsym):
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
    // Innermost first; empty without Python or on a thread Python never ran on.
    static alloc::Stack capture();

private:
    static alloc::Stack walk();  // under the GIL
};

}  // namespace allocscope::torchabi
