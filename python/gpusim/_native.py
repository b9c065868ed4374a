"""Finding and calling libgpusim.so (cli/api.h) through ctypes.

The library is looked up, first match wins, in:
  1. $GPUSIM_LIBRARY, a path to the library;
  2. this package's own folder (`pip install ./python` puts it there);
  3. build/libgpusim.so of the source tree this package sits in (PYTHONPATH=python);
  4. the lib/ folder beside an installed gpusim program on $PATH (cmake --install);
  5. the system's library path (ctypes.util.find_library("gpusim")).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import shutil
import threading
from typing import Iterator, List, Optional, Tuple

_LIB_NAME = "libgpusim.so"
_lock = threading.Lock()
_lib: Optional[ctypes.CDLL] = None


def _candidates() -> Iterator[str]:
    env = os.environ.get("GPUSIM_LIBRARY")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, _LIB_NAME)
    yield os.path.join(here, "..", "..", "build", _LIB_NAME)
    program = shutil.which("gpusim")
    if program:
        prefix = os.path.dirname(os.path.dirname(os.path.realpath(program)))
        for libdir in ("lib", "lib64", os.path.join("lib", "x86_64-linux-gnu")):
            yield os.path.join(prefix, libdir, _LIB_NAME)
    found = ctypes.util.find_library("gpusim")
    if found:
        yield found


def _bind(lib: ctypes.CDLL) -> ctypes.CDLL:
    call = ctypes.c_void_p
    lib.gpusim_api_run.restype = call
    lib.gpusim_api_run.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p),
                                   ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.gpusim_api_exit_code.restype = ctypes.c_int
    lib.gpusim_api_exit_code.argtypes = [call]
    for name in ("gpusim_api_error_kind", "gpusim_api_error", "gpusim_api_output", "gpusim_api_notes"):
        getattr(lib, name).restype = ctypes.c_char_p
        getattr(lib, name).argtypes = [call]
    lib.gpusim_api_free.restype = None
    lib.gpusim_api_free.argtypes = [call]
    lib.gpusim_api_version.restype = ctypes.c_char_p
    lib.gpusim_api_version.argtypes = []
    return lib


def library() -> ctypes.CDLL:
    """The loaded library (loaded once); OSError naming where it looked when absent."""
    global _lib
    with _lock:
        if _lib is None:
            tried: List[str] = []
            for path in _candidates():
                if os.path.sep in path and not os.path.exists(path):
                    tried.append(path)
                    continue
                try:
                    _lib = _bind(ctypes.CDLL(path))
                    break
                except OSError as e:
                    tried.append("%s (%s)" % (path, e))
            if _lib is None:
                raise OSError("gpusim: libgpusim.so not found (build it with cmake, or set GPUSIM_LIBRARY); "
                              "tried: " + ", ".join(tried or ["nothing"]))
        return _lib


def run(command: str, args: List[str], mem_name: Optional[str] = None,
        mem: Optional[bytes] = None) -> Tuple[int, str, str, str, List[str]]:
    """Run `gpusim COMMAND ARGS...`; returns (exit code, error kind, message, output, notes)."""
    lib = library()
    encoded = [a.encode("utf-8") for a in args]
    argv = (ctypes.c_char_p * (len(encoded) + 1))(*encoded, None)
    name = mem_name.encode("utf-8") if mem_name is not None else None
    call = lib.gpusim_api_run(command.encode("utf-8"), len(encoded), argv, name, mem,
                              len(mem) if mem is not None else 0)
    if not call:
        raise MemoryError("gpusim: out of host memory")
    try:
        return (lib.gpusim_api_exit_code(call),
                lib.gpusim_api_error_kind(call).decode("utf-8"),
                lib.gpusim_api_error(call).decode("utf-8", "replace"),
                lib.gpusim_api_output(call).decode("utf-8"),
                lib.gpusim_api_notes(call).decode("utf-8", "replace").splitlines())
    finally:
        lib.gpusim_api_free(call)


def version() -> str:
    """The loaded library's version."""
    text: bytes = library().gpusim_api_version()
    return text.decode("utf-8")
