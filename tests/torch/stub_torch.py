"""A stand-in for `torch` in TestTorchPythonHelper (CI has no torch): just the names that
allocscope_torch.enable() uses, each recording its call in `calls`. The test copies this file to
TMP/torch/__init__.py; torch.cuda and torch.cuda.memory are registered here as modules.

STUB_TORCH_CUDA_INITIALIZED=1 makes torch.cuda.is_initialized() true; STUB_TORCH_REFUSE_SWAP=1
makes change_current_allocator raise as PyTorch does once its allocator is initialized. The
allocator functions of c10 raise when reached: after enable() they must go to the library.
"""
import os
import sys
import types

calls = []


class _UntypedStorage:
    def __init__(self, base):
        self._base = base

    def data_ptr(self):
        return self._base


class Tensor:
    """A CUDA tensor viewing its storage (starting at `base`) from `offset` bytes on."""

    def __init__(self, base, offset=0):
        self._base, self._offset = base, offset

    def data_ptr(self):
        return self._base + self._offset

    def untyped_storage(self):
        return _UntypedStorage(self._base)

    def record_stream(self, stream):
        calls.append(["Tensor.record_stream", self.data_ptr(), stream.cuda_stream])


def _c10(name):
    def reached(*args, **kwargs):
        raise RuntimeError(f"stub c10 {name} reached: CUDAPluggableAllocator does not support it")
    return reached


memory = types.ModuleType("torch.cuda.memory")


class CUDAPluggableAllocator:
    def __init__(self, path_to_so_file, alloc_fn_name, free_fn_name):
        calls.append(["CUDAPluggableAllocator", path_to_so_file, alloc_fn_name, free_fn_name])


def change_current_allocator(allocator):
    if os.environ.get("STUB_TORCH_REFUSE_SWAP") == "1":
        raise RuntimeError("Can't swap an already initialized allocator")
    calls.append(["change_current_allocator", type(allocator).__name__])


def memory_allocated(device=None):
    # torch's own: reads memory_stats by its module-level name
    return memory.memory_stats(device=device).get("allocated_bytes.all.current", 0)


memory.CUDAPluggableAllocator = CUDAPluggableAllocator
memory.change_current_allocator = change_current_allocator
memory.memory_allocated = memory_allocated
for _name in ("empty_cache", "set_per_process_memory_fraction", "reset_peak_memory_stats",
              "reset_accumulated_memory_stats", "memory_stats", "memory_summary"):
    setattr(memory, _name, _c10(_name))

cuda = types.ModuleType("torch.cuda")
cuda.memory = memory


class Stream:
    def __init__(self, cuda_stream):
        self.cuda_stream = cuda_stream


cuda.Stream = Stream
cuda.is_initialized = lambda: os.environ.get("STUB_TORCH_CUDA_INITIALIZED") == "1"
cuda.current_device = lambda: 0
for _name in ("empty_cache", "set_per_process_memory_fraction", "reset_peak_memory_stats",
              "reset_accumulated_memory_stats", "memory_stats", "memory_summary", "memory_allocated"):
    setattr(cuda, _name, getattr(memory, _name))
sys.modules["torch.cuda"] = cuda
sys.modules["torch.cuda.memory"] = memory
