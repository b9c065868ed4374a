#!/usr/bin/env bash
# typing.sh — the Python module's type hints as a user's type checker reads them:
# mypy --strict passes on the module and on docs/python.md's example, with gpusim
# found as an installed package (in the site-packages of a bare virtual environment), so
# that its py.typed marker is what makes mypy read the hints (without the marker the
# same check fails: checked too). mypy comes from its own cached virtual environment
# ($GPUSIM_CACHE or ~/.cache/gpusim, venv-mypy), never the frameworks' one; when it
# cannot be installed the test says SKIPPED (exit 77; scripts/test lists it).
# Usage: typing.sh SOURCE_DIR
set -u
src=$(realpath "${1:?usage: typing.sh SOURCE_DIR}")
# shellcheck source=../../scripts/lib.sh
. "$src/scripts/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passes=0
fails=0
ok() { passes=$((passes + 1)); }
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
skip() {
  echo "SKIPPED: $1"
  [ -z "${GPUSIM_SKIP_LOG:-}" ] || printf 'python_typing: %s\n' "$1" >>"$GPUSIM_SKIP_LOG"
  exit 77
}

# mypy, pinned, in its own venv (made once; a failed install is tried again next run)
venv=$(gpusim_cache_dir)/venv-mypy
if ! [ -x "$venv/bin/mypy" ] || ! [ -f "$venv/.complete" ]; then
  mkdir -p "$(dirname "$venv")"
  if ! { python3 -m venv "$venv" && "$venv/bin/python" -m pip install -q --disable-pip-version-check mypy==2.4.1; } \
    >"$tmp/pip.log" 2>&1; then
    skip "mypy cannot be installed into $venv: $(grep -E '^(ERROR|error):' "$tmp/pip.log" | tail -n 1)"
  fi
  : >"$venv/.complete"
fi
mypy=$venv/bin/mypy

# the module itself
if out=$(cd "$src/python" && "$mypy" --strict --no-incremental gpusim 2>&1); then ok
else bad "mypy --strict gpusim: $out"; fi

# the example of docs/python.md against the package as installed: a bare venv whose
# site-packages holds python/gpusim
python3 -m venv --without-pip "$tmp/site" || bad "python3 -m venv"
site=$("$tmp/site/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
cp -r "$src/python/gpusim" "$site/gpusim"
python3 - "$src/docs/python.md" "$tmp/example.py" <<'PY'
import sys
text = open(sys.argv[1]).read()
section = text[text.index("## From Python"):]
open(sys.argv[2], "w").write(section.split("```python\n", 1)[1].split("```", 1)[0])
PY
cat >"$tmp/uses.py" <<'PY'
# the typed surface a caller leans on: results are dicts, the exception carries one
import gpusim


def peak(path: str) -> int:
    try:
        r = gpusim.replay(path, capacity="12GiB", fail_on_oom=True)
    except gpusim.OutOfMemoryError as e:
        r = e.result
    value: int = r["result"]["peak_reserved_bytes"]
    return value


result: gpusim.Result = gpusim.compare(["a.json", "b.json"], strategies=["torch", "growth"])
PY
for f in example.py uses.py; do
  if out=$(cd "$tmp" && "$mypy" --strict --no-incremental --python-executable "$tmp/site/bin/python" "$f" 2>&1); then ok
  else bad "mypy --strict $f: $out"; fi
done
# a wrong use is caught: a trace that is neither path, bytes nor snapshot
printf 'import gpusim\ngpusim.replay(42)\n' >"$tmp/wrong.py"
if out=$(cd "$tmp" && "$mypy" --strict --no-incremental --python-executable "$tmp/site/bin/python" wrong.py 2>&1); then
  bad "mypy accepted gpusim.replay(42)"
elif grep -q 'Argument 1 to "replay" has incompatible type "int"' <<<"$out"; then ok
else bad "mypy on replay(42): $out"; fi
# without py.typed the installed package is untyped to mypy
rm "$site/gpusim/py.typed"
if out=$(cd "$tmp" && "$mypy" --strict --no-incremental --python-executable "$tmp/site/bin/python" example.py 2>&1); then
  bad "mypy passed without py.typed: the marker test checks nothing"
elif grep -q 'missing library stubs or py.typed marker' <<<"$out"; then ok
else bad "mypy without py.typed: $out"; fi

echo "$passes passed, $fails failed"
[ "$passes" -gt 0 ] && [ "$fails" -eq 0 ]
