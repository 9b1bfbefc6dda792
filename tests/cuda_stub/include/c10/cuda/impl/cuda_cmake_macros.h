// Stand-in for the file a CUDA build of LibTorch generates (c10/cuda/impl/cuda_cmake_macros.h.in): empty in
// a Linux shared-library build. Only for the compile check in tests/cuda_stub (see its CMakeLists.txt).
#pragma once
