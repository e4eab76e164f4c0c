#pragma once
// A failed CUDA call, as an exception. The CUDA backend never carries on after an unexpected
// CUDA error: the allocator's bookkeeping would silently disagree with the device. Out of memory
// is not an error here (DeviceMemory reports it through nullopt / false), so whatever reaches a
// CudaError is a real fault: no driver, no GPU, a bad address, a lost context.
//
// CUDA-free header: code built without the toolkit's include paths may catch it.
#include <stdexcept>
#include <string>

namespace allocscope::alloc {

class CudaError : public std::runtime_error {
public:
    // `call`: what was attempted, e.g. "cudaMalloc(2097152 bytes)"; `code`: the cudaError_t or
    // CUresult value; `name`/`text`: CUDA's own name and description of it.
    CudaError(std::string call, int code, std::string name, std::string text);
    // A problem the backend detects itself (bad page size, unknown address, ...).
    explicit CudaError(std::string message);

    const std::string& call() const { return call_; }
    int code() const { return code_; }

private:
    std::string call_;
    int code_ = 0;
};

}  // namespace allocscope::alloc
