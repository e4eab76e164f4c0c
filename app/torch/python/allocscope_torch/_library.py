"""Finding and loading liballocscope_torch.so, and typing its C functions for ctypes.

Kept apart from the torch wiring so that finding the library can be tested (and explained to the
user) without torch: a library that is not found must say every place that was tried.
"""
import ctypes
import glob
import os
import sysconfig

LIBRARY_NAME = "liballocscope_torch.so"
ENV_LIBRARY = "ALLOCSCOPE_TORCH_LIBRARY"
# The Debian package's folder, /usr/lib/<triplet>/allocscope (resources/CMakeLists.txt says why
# not /usr/lib/allocscope). The triplet is this python's (x86_64-linux-gnu): Debian builds its
# python3 with the same one as the compiler that CMake takes the install folder from.
_MULTIARCH = sysconfig.get_config_var("MULTIARCH") or ""
INSTALLED_DIR = f"/usr/lib/{_MULTIARCH}/allocscope" if _MULTIARCH else "/usr/lib/allocscope"
# Where an install without a triplet (CMAKE_LIBRARY_ARCHITECTURE empty) puts the library: searched
# after INSTALLED_DIR, so that such an install is still found.
PLAIN_INSTALLED_DIR = "/usr/lib/allocscope"

# (name, restype, argtypes) of every function of the C ABI (app/torch/); ctypes would otherwise
# pass Python ints as C int and truncate 64-bit pointers and sizes.
_SIGNATURES = [
    ("allocscope_malloc", ctypes.c_void_p, [ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p]),
    ("allocscope_free", None, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p]),
    ("allocscope_record_stream", ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p]),
    ("allocscope_empty_cache", ctypes.c_int, []),
    ("allocscope_synchronize", ctypes.c_int, []),
    ("allocscope_set_memory_fraction", ctypes.c_int, [ctypes.c_double, ctypes.c_int]),
    ("allocscope_reset_peak_stats", ctypes.c_int, [ctypes.c_int]),
    ("allocscope_reset_accumulated_stats", ctypes.c_int, [ctypes.c_int]),
    ("allocscope_stats_json", ctypes.c_size_t, [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]),
    ("allocscope_memory_summary", ctypes.c_size_t, [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]),
    ("allocscope_finish", ctypes.c_int, []),
    ("allocscope_last_error", ctypes.c_char_p, []),
    ("allocscope_session_path", ctypes.c_char_p, []),
    ("allocscope_use_simulated_device", ctypes.c_int, [ctypes.c_ulonglong]),
    ("allocscope_set_python_frames", ctypes.c_int, [ctypes.c_int]),
    ("allocscope_set_oom_raises", ctypes.c_int, [ctypes.c_int]),
]


def candidates():
    """The places searched when neither library= nor ALLOCSCOPE_TORCH_LIBRARY names the file,
    in order: beside the package, the build trees of the source checkout the package sits in
    (app/torch/python/allocscope_torch -> build/*/app/torch/), the Debian package's folder, the
    folder of an install without a multiarch triplet."""
    here = os.path.dirname(os.path.abspath(__file__))
    places = [os.path.join(here, LIBRARY_NAME), os.path.join(os.path.dirname(here), LIBRARY_NAME)]
    root = os.path.abspath(os.path.join(here, "..", "..", "..", ".."))
    if os.path.isfile(os.path.join(root, "app", "torch", "CMakeLists.txt")):  # a source checkout
        pattern = os.path.join(root, "build", "*", "app", "torch", LIBRARY_NAME)
        # The most recently built tree first: after a rebuild that is the one the user means.
        built = sorted(glob.glob(pattern), key=lambda p: os.path.getmtime(p), reverse=True)
        places += built if built else [pattern]
    places.append(os.path.join(INSTALLED_DIR, LIBRARY_NAME))
    if PLAIN_INSTALLED_DIR != INSTALLED_DIR:
        places.append(os.path.join(PLAIN_INSTALLED_DIR, LIBRARY_NAME))
    return places


def find(library=None):
    """The path of the library to load. An explicit choice (library=, then the environment) is
    the only one tried: silently loading another build than the one named would mislead."""
    if library:
        if os.path.isfile(library):
            return os.path.abspath(library)
        raise FileNotFoundError(f"allocscope_torch: {LIBRARY_NAME} not found: library={library!r} does not exist")
    named = os.environ.get(ENV_LIBRARY)
    if named:
        if os.path.isfile(named):
            return os.path.abspath(named)
        raise FileNotFoundError(f"allocscope_torch: {LIBRARY_NAME} not found: {ENV_LIBRARY}={named!r} does not exist")
    places = candidates()
    for place in places:
        if os.path.isfile(place):
            return place
    raise FileNotFoundError(
        f"allocscope_torch: {LIBRARY_NAME} not found; looked in: " + ", ".join(places)
        + f". Build the CMake target allocscope_torch, install the allocscope package, or pass"
        f" enable(library=PATH) / set {ENV_LIBRARY}=PATH.")


def load(path):
    """Loads the library and types its functions; a library without one of them is refused."""
    try:
        lib = ctypes.CDLL(path)
    except OSError as error:
        raise RuntimeError(f"allocscope_torch: cannot load {path}: {error}") from None
    for name, restype, argtypes in _SIGNATURES:
        try:
            fn = getattr(lib, name)
        except AttributeError:
            raise RuntimeError(f"allocscope_torch: {path} has no function {name}: it is not an AllocScope torch library"
                               " (or one of another version)") from None
        fn.restype = restype
        fn.argtypes = argtypes
    return lib


def read_text(fn, device):
    """Calls one of the (device, buffer, capacity) -> needed-length functions and returns its text."""
    needed = fn(device, None, 0)
    buffer = ctypes.create_string_buffer(needed + 1)
    fn(device, buffer, needed + 1)
    return buffer.value.decode("utf-8", "replace")
