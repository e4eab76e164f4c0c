#include "storage/session/InternalFrame.h"

#include <string>

namespace allocscope::storage {

bool isInternalFrame(const alloc::Frame& frame) {
    const std::string& file = frame.filename;
    for (const char* part : {"/torch/", "/site-packages/", "/dist-packages/", "/lib/python", "<frozen ", "<string>"}) {
        if (file.find(part) != std::string::npos) return true;
    }
    return file.rfind("torch/", 0) == 0 || file.empty() || file == "??";
}

std::size_t userFrameIndex(const alloc::Stack& stack) {
    for (std::size_t i = 0; i < stack.size(); ++i) {
        if (!isInternalFrame(stack[i])) return i;
    }
    return 0;
}

}  // namespace allocscope::storage
