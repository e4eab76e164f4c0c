"""Run a PyTorch program on AllocScope's allocator and record it into a session file.

    import torch
    import allocscope_torch
    allocscope_torch.enable(session="run.allocscope", config="expandable_segments:True")
    ...  # the program, unchanged

enable() must run before CUDA is initialized (before the first CUDA tensor). It installs
liballocscope_torch.so as PyTorch's allocator through torch.cuda.memory.CUDAPluggableAllocator.
PyTorch hands a pluggable allocator only malloc and free, so the Python-level calls that would
otherwise not reach it are routed to the library here: Tensor.record_stream, empty_cache,
set_per_process_memory_fraction, reset_peak_memory_stats, reset_accumulated_memory_stats, and
memory_stats / memory_summary (which raise for a pluggable allocator). torch.cuda.synchronize is
left alone: c10 completes pending frees at the next malloc, not there, and so does the library.
"""
import collections
import json
import os
import shlex
import sys

from . import _library

__all__ = ["enable", "enabled", "memory_stats", "memory_summary", "finish", "session_path", "library_path"]

_state = None  # set by enable(): {"lib", "path", "config", "session"}


def enabled():
    return _state is not None


def library_path():
    return _state["path"] if _state else None


def _lib():
    if _state is None:
        raise RuntimeError("allocscope_torch: enable() has not been called")
    return _state["lib"]


def _error(what):
    message = _lib().allocscope_last_error()
    detail = message.decode("utf-8", "replace") if message else "no detail from the library"
    return RuntimeError(f"allocscope_torch: {what} failed: {detail}")


def _check(rc, what):
    if rc != 0:
        raise _error(what)


def _device_index(device):
    """torch's device arguments (None, int, "cuda:1", torch.device) as an index."""
    import torch
    if device is None:
        return torch.cuda.current_device()
    if isinstance(device, int):
        return device
    index = getattr(device, "index", None)
    if index is None and isinstance(device, str):
        _, _, number = device.partition(":")
        index = int(number) if number else None
    return torch.cuda.current_device() if index is None else index


def memory_stats(device=None):
    """torch.cuda.memory_stats() of the AllocScope allocator: the same flat keys, sorted."""
    text = _library.read_text(_lib().allocscope_stats_json, _device_index(device))
    try:
        stats = json.loads(text)
    except ValueError:
        raise _error("memory_stats") from None
    return collections.OrderedDict(sorted(stats.items()))


def memory_summary(device=None, abbreviated=False):
    """torch.cuda.memory_summary()'s text for the AllocScope allocator (always the full table)."""
    return _library.read_text(_lib().allocscope_memory_summary, _device_index(device))


def finish():
    """Ends the recording (the library also does it at exit); returns the session path or None."""
    _check(_lib().allocscope_finish(), "finish")
    return session_path()


def session_path():
    path = _lib().allocscope_session_path()
    return path.decode("utf-8", "replace") if path else None


def _empty_cache():
    _check(_lib().allocscope_empty_cache(), "empty_cache")


def _set_per_process_memory_fraction(fraction, device=None):
    # torch's own checks, with its messages
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if fraction < 0 or fraction > 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    _check(_lib().allocscope_set_memory_fraction(fraction, _device_index(device)), "set_per_process_memory_fraction")


def _reset_peak_memory_stats(device=None):
    _check(_lib().allocscope_reset_peak_stats(_device_index(device)), "reset_peak_memory_stats")


def _reset_accumulated_memory_stats(device=None):
    _check(_lib().allocscope_reset_accumulated_stats(_device_index(device)), "reset_accumulated_memory_stats")


def _wrap_record_stream(torch):
    original = torch.Tensor.record_stream

    def record_stream(self, stream):
        original(self, stream)  # torch's checks; for a pluggable allocator it records nothing
        # The allocator knows blocks by their start: a view's data_ptr() may lie inside one.
        base = self.untyped_storage().data_ptr()
        if base:
            _check(_lib().allocscope_record_stream(base, stream.cuda_stream), "record_stream")

    record_stream.__doc__ = original.__doc__
    torch.Tensor.record_stream = record_stream


# torch.cuda re-exports these from torch.cuda.memory, whose own functions (memory_allocated,
# reset_max_memory_allocated, ...) call them by their module-level names: both are replaced.
_ROUTED = {
    "empty_cache": _empty_cache,
    "set_per_process_memory_fraction": _set_per_process_memory_fraction,
    "reset_peak_memory_stats": _reset_peak_memory_stats,
    "reset_accumulated_memory_stats": _reset_accumulated_memory_stats,
    "memory_stats": memory_stats,
    "memory_summary": memory_summary,
}


def _too_late(detail):
    return RuntimeError(
        "allocscope_torch.enable() came too late: " + detail + ". PyTorch swaps its allocator only before"
        " CUDA is initialized; call enable() right after `import torch`, before the first CUDA tensor,"
        " .cuda()/.to('cuda') or torch.cuda call that touches the device.")


def enable(session=None, config="", python_frames=False, library=None):
    """Installs the AllocScope allocator. session: a .allocscope file to record into (None: the
    environment's ALLOCSCOPE_SESSION, if any); config: PYTORCH_CUDA_ALLOC_CONF's grammar;
    python_frames: record Python stacks with every allocation; library: the .so to load."""
    global _state
    wanted = {"config": config, "session": session}
    if _state is not None:
        if {k: _state[k] for k in wanted} == wanted:
            return _state["path"]
        raise RuntimeError("allocscope_torch.enable() was already called with other arguments"
                           f" ({_state['config']!r}, {_state['session']!r}); a process has one allocator")
    import torch
    if torch.cuda.is_initialized():
        raise _too_late("CUDA is already initialized")
    path = _library.find(library)
    os.environ["ALLOCSCOPE_CUDA_ALLOC_CONF"] = config
    if session is not None:
        os.environ["ALLOCSCOPE_SESSION"] = os.path.abspath(session)
    if python_frames:
        os.environ["ALLOCSCOPE_PYTHON_FRAMES"] = "1"
    lib = _library.load(path)
    # PyTorch 2.11 takes a NULL from alloc_fn for a tensor at address 0: the library throws
    # instead, and PyTorch raises it as a RuntimeError with the OOM message (allocscope_torch.h).
    lib.allocscope_set_oom_raises(1)
    allocator = torch.cuda.memory.CUDAPluggableAllocator(path, "allocscope_malloc", "allocscope_free")
    try:
        torch.cuda.memory.change_current_allocator(allocator)
    except RuntimeError as error:
        raise _too_late(f"PyTorch refused the swap ({error})") from None
    _state = {"lib": lib, "path": path, "config": config, "session": session, "allocator": allocator}
    if python_frames:
        _check(lib.allocscope_set_python_frames(1), "set_python_frames")
    _wrap_record_stream(torch)
    for name, fn in _ROUTED.items():
        setattr(torch.cuda, name, fn)
        setattr(torch.cuda.memory, name, fn)
    # The library reads its environment at its first call: a refused config or session is
    # reported on stderr now, by the library, rather than at the first allocation.
    recording = session_path()
    wanted_session = os.environ.get("ALLOCSCOPE_SESSION")
    if recording:
        where = f"recording into {recording} — watch it live: allocscope {shlex.quote(recording)}"
    elif wanted_session:
        where = f"NOT recording: the library refused the session {wanted_session} (its message is above)"
    else:
        where = "not recording (enable(session=FILE) records a session)"
    print(f'AllocScope allocator on (config "{config}"); {where}', file=sys.stderr, flush=True)
    return path
