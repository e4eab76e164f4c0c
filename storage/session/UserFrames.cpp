#include "storage/session/UserFrames.h"

#include "storage/import/FrameLine.h"

namespace allocscope::storage {

bool UserFrames::internal(const alloc::Frame& frame) {
    const std::string& file = frame.filename;
    if (file.empty() || file == "??" || file.rfind("torch/", 0) == 0) return true;
    for (const char* part : {"/torch/", "/site-packages/", "/dist-packages/", "/lib/python", "<frozen ", "<string>"}) {
        if (file.find(part) != std::string::npos) return true;
    }
    return false;
}

const alloc::Frame* UserFrames::top(const alloc::Stack& stack) {
    if (stack.empty()) return nullptr;
    for (const alloc::Frame& f : stack) {
        if (!internal(f)) return &f;
    }
    return &stack.front();
}

std::string UserFrames::label(const alloc::Frame& frame) {
    return frame.name + " (" + frame.filename + ":" + FrameLine::text(frame.line) + ")";
}

std::string UserFrames::topLabel(const alloc::Stack& stack) {
    const alloc::Frame* frame = top(stack);
    return frame ? label(*frame) : std::string("no stack recorded");
}

}  // namespace allocscope::storage
