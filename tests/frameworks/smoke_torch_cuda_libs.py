"""The CUDA build's allocator, as its wheel ships it: scripts/frameworks unpacks only
lib/libc10.so, lib/libc10_cuda.so, include/ and version.py of the torch 2.14.1 wheel
($GPUSIM_TORCH_CUDA_DIR). The shipped allocator check builds against these files: the
caching allocator's header is there, the library exports its entry points and needs the
CUDA runtime (the mock gives it one)."""

import os
import re
import subprocess

from _smoke import check, finish, skip

d = os.environ.get("GPUSIM_TORCH_CUDA_DIR")
if not d or not os.path.isdir(d):
    skip("no unpacked torch CUDA wheel ($GPUSIM_TORCH_CUDA_DIR is unset or missing; scripts/frameworks makes it)")
want = os.environ.get("GPUSIM_TORCH_CUDA_VERSION", "2.14.1")
with open(os.path.join(d, "version.py")) as f:
    m = re.search(r"__version__\s*=\s*'([^']+)'", f.read())
check(m is not None and m.group(1).startswith(want), "version.py says %s, want %s" % (m and m.group(1), want))
check(os.path.isfile(os.path.join(d, "include", "c10", "cuda", "CUDACachingAllocator.h")), "the allocator's header")
lib = os.path.join(d, "lib", "libc10_cuda.so")
check(os.path.isfile(os.path.join(d, "lib", "libc10.so")), "libc10.so")
dyn = subprocess.run(["readelf", "--dyn-syms", "--wide", lib], capture_output=True, text=True).stdout
needed = subprocess.run(["readelf", "-d", lib], capture_output=True, text=True).stdout
# the allocator object PyTorch calls through: c10::cuda::CUDACachingAllocator::allocator
check("_ZN3c104cuda20CUDACachingAllocator9allocatorE" in dyn, "libc10_cuda.so exports CUDACachingAllocator::allocator")
check(re.search(r"NEEDED.*libcudart\.so\.1[23]", needed) is not None, "libc10_cuda.so needs the CUDA runtime")
check(re.search(r"cudaMalloc@libcudart\.so\.1[23]", dyn) is not None, "cudaMalloc is imported with a version")
finish()
