#include "app/torch/PythonFrames.h"

#include <dlfcn.h>

#include <string>

namespace allocscope::torchabi {
namespace {

// CPython's objects stay opaque here: only the stable functions below touch them.
using PyObj = void;
struct PythonApi {
    int (*gilCheck)() = nullptr;                              // PyGILState_Check
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
        a.complete = lookUp(a.gilCheck, "PyGILState_Check") && lookUp(a.currentFrame, "PyEval_GetFrame") &&
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
    alloc::Stack stack;
    const PythonApi& api = pythonApi();
    if (!api.complete || api.gilCheck() != 1) return stack;
    PyObj* frame = api.currentFrame();
    if (!frame) return stack;
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
