"""Shared by the framework smoke tests: import a framework or skip, and count checks.

A test calls need("torch") for its framework: when it cannot be imported the test says
SKIPPED with the reason, appends "frameworks_NAME: reason" to $GPUSIM_SKIP_LOG (the list
scripts/test prints at its end) and exits 77, which ctest counts as skipped. check()
counts; finish() prints the "N passed, M failed" line and exits non-zero on a failure.
"""

import importlib
import os
import sys

_name = os.path.splitext(os.path.basename(sys.argv[0]))[0].replace("smoke_", "frameworks_")
_passed = 0
_failed = 0


def skip(reason):
    print("SKIPPED: " + reason)
    log = os.environ.get("GPUSIM_SKIP_LOG")
    missing = os.environ.get("GPUSIM_FRAMEWORKS_MISSING")
    if missing:
        reason += " (scripts/frameworks: " + missing + ")"
    if log:
        with open(log, "a") as f:
            f.write("%s: %s\n" % (_name, reason))
    sys.exit(77)


def need(module):
    try:
        return importlib.import_module(module)
    except ImportError as e:
        skip("%s cannot be imported by %s: %s" % (module, sys.executable, e))


def check(cond, what):
    global _passed, _failed
    if cond:
        _passed += 1
    else:
        _failed += 1
        print("FAIL: " + what)


def finish():
    print("%d passed, %d failed" % (_passed, _failed))
    sys.exit(1 if _failed or not _passed else 0)
