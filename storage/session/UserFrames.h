#pragma once
// Which frames of a stack are the user's code: not PyTorch itself (torch/ and its packages) and
// not Python's own machinery (the standard library, frozen importlib, <string>). What the views and
// the CLI name an allocation by ("top user frame") and what "hide PyTorch internals" folds away.
#include <string>

#include "allocator/core/StackTable.h"

namespace allocscope::storage {

class UserFrames {
public:
    static bool internal(const alloc::Frame& frame);
    // The innermost frame that is not internal, else the innermost frame; nullptr for no frames.
    static const alloc::Frame* top(const alloc::Stack& stack);
    // "name (file:line)", with "?" for an unknown line.
    static std::string label(const alloc::Frame& frame);
    // label(*top(stack)), or "no stack recorded".
    static std::string topLabel(const alloc::Stack& stack);
};

}  // namespace allocscope::storage
