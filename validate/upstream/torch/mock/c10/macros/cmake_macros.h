/* Replaces CMake's generated c10/macros/cmake_macros.h (validate/upstream/torch): a
 * static build without glog, gflags or NUMA. */
#ifndef C10_MACROS_CMAKE_MACROS_H_
#define C10_MACROS_CMAKE_MACROS_H_
#endif
