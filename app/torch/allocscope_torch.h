#ifndef ALLOCSCOPE_TORCH_H
#define ALLOCSCOPE_TORCH_H
/* liballocscope_torch.so: AllocScope's caching allocator (PyTorch 2.11's decisions) as PyTorch's
 * pluggable CUDA allocator, recording every event into a session file while the process runs.
 *
 *   torch.cuda.memory.CUDAPluggableAllocator("liballocscope_torch.so", "allocscope_malloc",
 *                                            "allocscope_free")  + change_current_allocator(...)
 *
 * Plain C, no CUDA headers: a stream is the cudaStream_t value as void* (0 = legacy default).
 * Every function may be called from any thread (one mutex per device, as in c10). Functions that
 * return int give 0 on success and -1 on error; allocscope_last_error() then says why.
 *
 * Environment, read once, at the first call of any function:
 *   ALLOCSCOPE_CUDA_ALLOC_CONF  the allocator's config, parsed exactly like PYTORCH_CUDA_ALLOC_CONF
 *                               (PyTorch 2.11's grammar). A string PyTorch refuses is reported once
 *                               on stderr (what and at which column) and every malloc then
 *                               returns NULL: never a silent default.
 *   ALLOCSCOPE_SESSION          a session file to record into (created if missing). An existing
 *                               file must be an AllocScope session of this schema; anything else
 *                               is refused (stderr, allocscope_last_error) and left untouched, and
 *                               the allocator then runs without recording.
 *   ALLOCSCOPE_DEVICE           "simulated:BYTES": the simulated device of that total memory
 *                               instead of CUDA (what allocscope_use_simulated_device does).
 *   ALLOCSCOPE_PYTHON_FRAMES    "1": Python frames on each alloc (allocscope_set_python_frames).
 */
#include <stddef.h>

/* The library is built with hidden visibility: only these functions are exported. */
#if defined(__GNUC__)
#define ALLOCSCOPE_TORCH_API __attribute__((visibility("default")))
#else
#define ALLOCSCOPE_TORCH_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* PyTorch's alloc_fn: `size` requested bytes (rounded here as c10 rounds). NULL on OOM or error,
 * with allocscope_last_error() saying why (PyTorch 2.11 does not check: the tensor gets address 0),
 * or, after allocscope_set_oom_raises(1), a std::runtime_error with that text. The text is this
 * call's own failure, even while other threads run out of memory on the same device. */
ALLOCSCOPE_TORCH_API void* allocscope_malloc(size_t size, int device, void* stream);
/* PyTorch's free_fn. A block used on other streams (allocscope_record_stream) stays pending
 * until those streams have passed the free (checked before each malloc, as c10's
 * process_events). On the simulated device there are no real streams: pending frees complete at
 * allocscope_synchronize and allocscope_empty_cache. */
ALLOCSCOPE_TORCH_API void allocscope_free(void* ptr, size_t size, int device, void* stream);
/* Tensor.record_stream(stream): the block is also used on `stream`. */
ALLOCSCOPE_TORCH_API int allocscope_record_stream(void* ptr, void* stream);
/* torch.cuda.empty_cache() on every device used: completes pending frees (waiting for their
 * streams), then releases every whole free segment. */
ALLOCSCOPE_TORCH_API int allocscope_empty_cache(void);
/* Completes every pending free on every device (cudaDeviceSynchronize on CUDA). */
ALLOCSCOPE_TORCH_API int allocscope_synchronize(void);
ALLOCSCOPE_TORCH_API int allocscope_set_memory_fraction(double fraction, int device);
ALLOCSCOPE_TORCH_API int allocscope_reset_peak_stats(int device);
ALLOCSCOPE_TORCH_API int allocscope_reset_accumulated_stats(int device);
/* torch.cuda.memory_stats(device) as one JSON object of its 122 flat keys. Both write at most
 * capacity-1 characters and a NUL, and return the length of the whole text (without the NUL):
 * call with capacity 0 to learn it. 0 on error. */
ALLOCSCOPE_TORCH_API size_t allocscope_stats_json(int device, char* buffer, size_t capacity);
/* torch.cuda.memory_summary(device), character for character. */
ALLOCSCOPE_TORCH_API size_t allocscope_memory_summary(int device, char* buffer, size_t capacity);
/* Ends the recording: the last batch, the final statistics, every run marked complete. The
 * allocator keeps working afterwards, unrecorded. Idempotent; also run at process exit. */
ALLOCSCOPE_TORCH_API int allocscope_finish(void);
/* This thread's last error, "" when none. */
ALLOCSCOPE_TORCH_API const char* allocscope_last_error(void);
/* The session file being recorded into, "" when none. */
ALLOCSCOPE_TORCH_API const char* allocscope_session_path(void);
/* Before the first malloc: a simulated device of `total_memory` bytes instead of CUDA. */
ALLOCSCOPE_TORCH_API int allocscope_use_simulated_device(unsigned long long total_memory);
/* Python frames (off by default): when the allocating thread holds the GIL, the innermost
 * frames of its Python stack become the event's stack. Needs no libpython at link time. */
ALLOCSCOPE_TORCH_API int allocscope_set_python_frames(int on);
/* on != 0: a malloc that cannot be served (OOM or error) throws std::runtime_error carrying
 * allocscope_last_error()'s text instead of returning NULL, so that PyTorch raises a RuntimeError
 * ("CUDA out of memory. Tried to allocate ...") where it would otherwise build a tensor at address
 * 0. Only for callers whose frames are C++ (PyTorch's pluggable allocator); the Python helper
 * turns it on. Off by default: C and ctypes callers get NULL. Returns the previous setting (0/1). */
ALLOCSCOPE_TORCH_API int allocscope_set_oom_raises(int on);

#ifdef __cplusplus
}
#endif

#endif /* ALLOCSCOPE_TORCH_H */
