/* Replaces CMake's generated c10/cuda/impl/cuda_cmake_macros.h (validate/upstream/torch):
 * a static build. */
#pragma once
