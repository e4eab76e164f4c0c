"""liballocscope_torch.so inside a real PyTorch process (tests/gpu/run_torch_abi.sh runs it).

  python3 torch_abi_check.py LIB pluggable|c10 OUT.json

The same few tensors, a matmul and a tensor used on a side stream, once with liballocscope_torch
as PyTorch's pluggable allocator and once with PyTorch's own (c10) allocator; each run writes its
memory_stats() (ours from allocscope_stats_json) and timings to OUT.json, and the shell compares.
"""
import ctypes
import json
import os
import sys
import time

import torch

lib_path, mode, out_path = sys.argv[1], sys.argv[2], sys.argv[3]
report = {"mode": mode, "torch": torch.__version__}
lib = None
if mode == "pluggable":
    allocator = torch.cuda.memory.CUDAPluggableAllocator(lib_path, "allocscope_malloc", "allocscope_free")
    torch.cuda.memory.change_current_allocator(allocator)
    lib = ctypes.CDLL(lib_path)  # the handle PyTorch opened (dlopen counts references)
    lib.allocscope_record_stream.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    lib.allocscope_stats_json.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]
    lib.allocscope_stats_json.restype = ctypes.c_size_t
    lib.allocscope_last_error.restype = ctypes.c_char_p
    lib.allocscope_session_path.restype = ctypes.c_char_p
    if os.environ.get("ALLOCSCOPE_OOM_RAISES") == "1":  # as the Python helper's enable() does
        lib.allocscope_set_oom_raises(1)


def our_stats():
    n = lib.allocscope_stats_json(0, None, 0)
    buf = ctypes.create_string_buffer(n + 1)
    lib.allocscope_stats_json(0, buf, n + 1)
    return json.loads(buf.value.decode())


def empty_cache():
    if lib:
        lib.allocscope_empty_cache()
    else:
        torch.cuda.empty_cache()


torch.manual_seed(0)
a = torch.randn(1024, 1024, device="cuda")
b = torch.randn(1024, 1024, device="cuda")
c = a @ b
small = [torch.empty(1000 * (i + 1), device="cuda") for i in range(50)]
del small[::2]
side = torch.cuda.Stream()
t = torch.empty(64 << 20, dtype=torch.uint8, device="cuda")  # allocated on the default stream
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    t.fill_(7)
    torch.cuda._sleep(50_000_000)  # keeps the side stream busy: the free must stay pending
if lib:
    # Tensor.record_stream reaches a pluggable allocator only through a C++ setter: the C ABI.
    report["record_stream_rc"] = lib.allocscope_record_stream(t.data_ptr(), side.cuda_stream)
else:
    t.record_stream(side)
t_ptr = t.data_ptr()
del t
again = torch.empty(64 << 20, dtype=torch.uint8, device="cuda")
report["reused_while_side_busy"] = again.data_ptr() == t_ptr  # must be False
del again
torch.cuda.synchronize()
again = torch.empty(64 << 20, dtype=torch.uint8, device="cuda")
report["reused_after_sync"] = again.data_ptr() == t_ptr
del again, c
empty_cache()
d = a @ b
report["checksum"] = float(d.sum().item())
del d

# Cost per torch.empty + free of 1 MiB from Python (the whole PyTorch path).
n = 20000
torch.cuda.synchronize()
start = time.perf_counter()
for _ in range(n):
    x = torch.empty(1 << 20, dtype=torch.uint8, device="cuda")
    del x
report["empty_free_ns"] = (time.perf_counter() - start) / n * 1e9

# What PyTorch does with an allocation its allocator cannot serve (ours answers NULL).
try:
    huge = torch.empty(1 << 40, dtype=torch.uint8, device="cuda")  # 1 TiB
    report["oom"] = f"no exception; data_ptr {huge.data_ptr()}"
    del huge
except Exception as e:
    report["oom"] = type(e).__name__ + ": " + str(e).splitlines()[0][:160]

if lib:
    report["stats"] = our_stats()
    try:
        torch.cuda.memory_stats()
        report["torch_memory_stats"] = "answered"
    except Exception as e:  # what PyTorch says under a pluggable allocator
        report["torch_memory_stats"] = str(e).splitlines()[0]
    report["session"] = lib.allocscope_session_path().decode()
    report["last_error"] = lib.allocscope_last_error().decode()
else:
    report["stats"] = torch.cuda.memory_stats()
report["total_memory"] = torch.cuda.get_device_properties(0).total_memory
with open(out_path, "w") as f:
    json.dump(report, f, indent=1, sort_keys=True)
print(mode, "done")
