# cmake/hip.cmake — VPOC_GPU_BACKEND=hip: the GPU sources built as HIP with rocPRIM.
# Needs CMake >= 3.27 (HIP language with a plain ROCm clang) and HIP_PLATFORM=amd in the environment.
if(CMAKE_VERSION VERSION_LESS 3.27)
  message(FATAL_ERROR "VPOC_GPU_BACKEND=hip needs CMake >= 3.27 (found ${CMAKE_VERSION})")
endif()
if(NOT DEFINED CMAKE_HIP_ARCHITECTURES)
  # RX 7900 XT/XTX (gfx1100), RX 6000 (gfx1030), MI200 (gfx90a), MI300 (gfx942). Set it explicitly
  # where no GPU is present: autodetection runs rocm_agent_enumerator, which fails without one.
  set(CMAKE_HIP_ARCHITECTURES gfx1100 gfx1030 gfx90a gfx942)
endif()
enable_language(HIP)
set(CMAKE_HIP_STANDARD 17)
set(CMAKE_HIP_STANDARD_REQUIRED ON)
set(CMAKE_HIP_EXTENSIONS OFF)
set_source_files_properties(${VPOC_GPU_SOURCES} PROPERTIES LANGUAGE HIP)
add_library(vpoc_gpu STATIC ${VPOC_GPU_SOURCES})
target_compile_definitions(vpoc_gpu PUBLIC VPOC_BACKEND_HIP=1)
# -ffp-contract=off: no multiply-add contraction, so float results match the CPU engine bit for bit.
target_compile_options(vpoc_gpu PRIVATE -ffp-contract=off -Wall -Wextra)
target_link_libraries(vpoc_gpu PUBLIC vpoc_core hip-lang::amdhip64)
