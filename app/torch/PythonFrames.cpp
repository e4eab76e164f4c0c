#include "app/torch/PythonFrames.h"

#include <dlfcn.h>

#include <string>

namespace allocscope::torchabi {
namespace {

// CPython's objects stay opaque here: only the stable functions below touch them.
using PyObj = void;
struct PythonApi {
    int (*initialized)() = nullptr;                           // Py_IsInitialized
    int (*gilCheck)() = nullptr;                              // PyGILState_Check
    PyObj* (*threadState)() = nullptr;                        // PyGILState_GetThisThreadState
    int (*gilEnsure)() = nullptr;                             // PyGILState_Ensure (an enum)
    void (*gilRelease)(int) = nullptr;                        // PyGILState_Release
    PyObj* (*currentFrame)() = nullptr;                       // PyEval_GetFrame (borrowed)
    PyObj* (*frameCode)(PyObj*) = nullptr;                    // PyFrame_GetCode (new reference)
    PyObj* (*frameBack)(PyObj*) = nullptr;                    // PyFrame_GetBack (new reference)
    int (*frameLine)(PyObj*) = nullptr;                       // PyFrame_GetLineNumber
    PyObj* (*getAttr)(PyObj*, const char*) = nullptr;         // PyObject_GetAttrString (new)
    const char* (*utf8)(PyObj*) = nullptr;                    // PyUnicode_AsUTF8 (borrowed)
    void (*decRef)(PyObj*) = nullptr;                         // Py_DecRef
    void (*errClear)() = nullptr;                             // PyErr_Clear
    bool complete = false;
};

template <class Fn>
bool lookUp(Fn& fn, const char* name) {
    // The conversion from void* is what dlsym's contract is for.
    fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
    return fn != nullptr;
}

const PythonApi& pythonApi() {
    static const PythonApi api = [] {
        PythonApi a;
        a.complete = lookUp(a.initialized, "Py_IsInitialized") && lookUp(a.gilCheck, "PyGILState_Check") && lookUp(a.threadState, "PyGILState_GetThisThreadState") &&
                     lookUp(a.gilEnsure, "PyGILState_Ensure") && lookUp(a.gilRelease, "PyGILState_Release") && lookUp(a.currentFrame, "PyEval_GetFrame") &&
                     lookUp(a.frameCode, "PyFrame_GetCode") && lookUp(a.frameBack, "PyFrame_GetBack") &&
                     lookUp(a.frameLine, "PyFrame_GetLineNumber") && lookUp(a.getAttr, "PyObject_GetAttrString") &&
                     lookUp(a.utf8, "PyUnicode_AsUTF8") && lookUp(a.decRef, "Py_DecRef") && lookUp(a.errClear, "PyErr_Clear");
        return a;
    }();
    return api;
}

std::string textAttribute(const PythonApi& api, PyObj* object, const char* name) {
    PyObj* value = api.getAttr(object, name);
    if (!value) {
        api.errClear();
        return "?";
    }
    const char* text = api.utf8(value);
    std::string out = text ? text : "?";
    if (!text) api.errClear();
    api.decRef(value);
    return out;
}

}  // namespace

bool PythonFrames::available() { return pythonApi().complete; }

alloc::Stack PythonFrames::capture() {
    const PythonApi& api = pythonApi();
    // Not before the interpreter starts or after it has finalised (tensors freed at exit).
    if (!api.complete || !api.initialized()) return {};
    if (api.gilCheck() == 1) return walk();
    // PyTorch's bindings release the GIL around an op, so the thread that allocates for
    // torch.empty() is a Python thread without the GIL: take it back, as PyTorch's own
    // record_memory_history(stacks="python") does, and read the frames the thread stopped at.
    // Threads Python never ran on (the autograd engine's) have no frames to give.
    if (!api.threadState()) return {};
    const int state = api.gilEnsure();
    alloc::Stack stack = walk();
    api.gilRelease(state);
    return stack;
}

alloc::Stack PythonFrames::walk() {
    alloc::Stack stack;
    const PythonApi& api = pythonApi();
    PyObj* frame = api.currentFrame();
    PyObj* owned = nullptr;  // the frames PyFrame_GetBack handed us, released as we go
    while (frame && stack.size() < kMaxFrames) {
        PyObj* code = api.frameCode(frame);
        alloc::Frame f;
        f.line = api.frameLine(frame);
        if (code) {
            f.filename = textAttribute(api, code, "co_filename");
            f.name = textAttribute(api, code, "co_name");
            api.decRef(code);
        }
        stack.push_back(std::move(f));
        PyObj* back = api.frameBack(frame);
        if (owned) api.decRef(owned);
        owned = back;
        frame = back;
    }
    if (owned) api.decRef(owned);
    return stack;
}

}  // namespace allocscope::torchabi
