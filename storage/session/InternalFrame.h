#pragma once
// Which frames of a recorded stack are PyTorch's or Python's own rather than the user's code:
// files under torch/ (and any site-packages / dist-packages library), the interpreter's standard
// library (lib/pythonX.Y: importlib, runpy, threading, ...), <frozen ...> and <string> modules,
// and frames without a file. One rule for every place that looks for "the user's code": the CLI's
// top user frame, the GUI's live-tensor table and its "hide PyTorch internals" tree.
#include <cstddef>

#include "allocator/core/StackTable.h"

namespace allocscope::storage {

bool isInternalFrame(const alloc::Frame& frame);
// The index of the innermost frame that is not internal; 0 (the innermost frame) when every frame
// is internal. Only for a non-empty stack.
std::size_t userFrameIndex(const alloc::Stack& stack);

}  // namespace allocscope::storage
