# GPU extras of the benchmarks. Include after the bench_* targets exist:
#     include(${CMAKE_CURRENT_SOURCE_DIR}/gpu.cmake)   # at the end of tests/benchmarks/CMakeLists.txt
#
#  - bench_gpu_replay needs the trace importer (otherwise it only arrives through sqlite's
#    allocscope_storage, which a GPU server may lack).
#  - ALLOCSCOPE_WITH_C10=ON: bench_gpu_race also races PyTorch's c10 CUDA caching allocator and
#    compares its statistics and snapshot layout with AllocScope's. Needs PyTorch's C++ headers
#    and libc10_cuda: ALLOCSCOPE_C10_PREFIX = torch's package directory (holds include/ and
#    lib/), or empty to ask `python3 -c "import torch"`. The binary then uses the shared CUDA
#    runtime, the one libc10_cuda uses, so both allocators share one runtime in the process.
#    tests/gpu/run_device.sh does the same with a direct g++ command line.
option(ALLOCSCOPE_WITH_C10 "Race PyTorch's c10 CUDA caching allocator in bench_gpu_race (needs torch)" OFF)
set(ALLOCSCOPE_C10_PREFIX "" CACHE PATH "torch package directory (include/, lib/); empty: ask python3")

# bench_gpu_driver_placement calls the CUDA runtime itself (cudaMalloc, the driver's VMM entry
# points through CudaDriverApi); without the toolkit it builds as a stub that says "no GPU".
if(TARGET bench_gpu_driver_placement AND ALLOCSCOPE_WITH_CUDA)
    target_link_libraries(bench_gpu_driver_placement PRIVATE CUDA::cudart_static ${CMAKE_DL_LIBS})
endif()

# bench_gpu_race holds the two_stream sequence's real streams and events itself (RaceStreams).
if(TARGET bench_gpu_race AND ALLOCSCOPE_WITH_CUDA)
    target_sources(bench_gpu_race PRIVATE ${ALLOCSCOPE_SOURCE_ROOT}/tests/gpu/RaceStreams.cpp)
    if(NOT ALLOCSCOPE_WITH_C10)
        target_link_libraries(bench_gpu_race PRIVATE CUDA::cudart_static ${CMAKE_DL_LIBS})
    endif()
endif()

if(TARGET bench_gpu_replay)
    target_link_libraries(bench_gpu_replay PRIVATE allocscope_import)
    target_compile_definitions(bench_gpu_replay PRIVATE ALLOCSCOPE_GPU_WITH_IMPORT=1)
endif()

if(ALLOCSCOPE_WITH_C10 AND TARGET bench_gpu_race)
    if(NOT ALLOCSCOPE_WITH_CUDA)
        message(FATAL_ERROR "ALLOCSCOPE_WITH_C10 needs the CUDA backend (ALLOCSCOPE_WITH_CUDA)")
    endif()
    set(_c10_prefix "${ALLOCSCOPE_C10_PREFIX}")
    if(NOT _c10_prefix)
        execute_process(COMMAND python3 -c "import os, torch; print(os.path.dirname(torch.__file__))"
            OUTPUT_VARIABLE _c10_prefix OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    endif()
    if(NOT EXISTS "${_c10_prefix}/include/c10/cuda/CUDACachingAllocator.h")
        message(FATAL_ERROR "ALLOCSCOPE_WITH_C10: no c10 headers under '${_c10_prefix}' "
                            "(set ALLOCSCOPE_C10_PREFIX to torch's package directory)")
    endif()
    find_library(ALLOCSCOPE_C10_LIB c10 PATHS "${_c10_prefix}/lib" NO_DEFAULT_PATH REQUIRED)
    find_library(ALLOCSCOPE_C10_CUDA_LIB c10_cuda PATHS "${_c10_prefix}/lib" NO_DEFAULT_PATH REQUIRED)
    target_sources(bench_gpu_race PRIVATE ${ALLOCSCOPE_SOURCE_ROOT}/tests/gpu/C10Backend.cpp)
    target_include_directories(bench_gpu_race SYSTEM PRIVATE "${_c10_prefix}/include")
    # Listed before allocscope_allocator's static runtime, so the shared one resolves every call.
    target_link_libraries(bench_gpu_race PRIVATE ${ALLOCSCOPE_C10_CUDA_LIB} ${ALLOCSCOPE_C10_LIB} CUDA::cudart)
    target_compile_definitions(bench_gpu_race PRIVATE ALLOCSCOPE_WITH_C10=1)
    set_target_properties(bench_gpu_race PROPERTIES BUILD_RPATH "${_c10_prefix}/lib")
    message(STATUS "AllocScope: bench_gpu_race races c10 from ${_c10_prefix}")
endif()
