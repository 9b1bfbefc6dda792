// Compile-check stand-in for the CUDA driver API header: only what LibTorch's c10/cuda headers use.
// The version is JetPack 5's CUDA 11.4. See tests/cuda_stub/CMakeLists.txt.
#pragma once
#define CUDA_VERSION 11040
