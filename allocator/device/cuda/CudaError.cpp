#include "allocator/device/cuda/CudaError.h"

#include <utility>

namespace allocscope::alloc {

namespace {

std::string describe(const std::string& call, int code, const std::string& name, const std::string& text) {
    return "CUDA error in " + call + ": " + name + " (" + std::to_string(code) + "): " + text;
}

}  // namespace

CudaError::CudaError(std::string call, int code, std::string name, std::string text)
    : std::runtime_error(describe(call, code, name, text)), call_(std::move(call)), code_(code) {}

CudaError::CudaError(std::string message) : std::runtime_error("CUDA backend: " + message) {}

}  // namespace allocscope::alloc
