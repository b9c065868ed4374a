#!/usr/bin/env bash
# `cmake --install` into a temporary prefix, then the installed tool: the program runs
# and prints what the build's does; the man page has every command and every option
# that `gpusim COMMAND --help` lists (and `gpusim synth KIND --help`); bash completion
# offers the commands, options and values; the Python module finds the installed
# libgpusim.so beside the installed program; the licence is there.
# Usage: cli_install.sh GPUSIM_BINARY SOURCE_DIR (GPUSIM_BINARY inside its build directory)
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"
cd "$src" || exit 2
build=$(dirname "$bin")
prefix=$tmp/prefix
if ! cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1; then
  bad "cmake --install $build --prefix $prefix failed: $(tail -5 "$tmp/install.log")"
  cli_finish
  exit 1
fi
ok
installed=$prefix/bin/gpusim
man=$prefix/share/man/man1/gpusim.1
completion=$prefix/share/bash-completion/completions/gpusim
for f in "$installed" "$prefix/lib/libgpusim.so" "$man" "$completion" "$prefix/share/doc/gpusim/LICENSE"; do
  if [ -f "$f" ]; then ok; else bad "not installed: ${f#"$prefix"/}"; fi
done
[ -x "$installed" ] || { cli_finish; exit 1; }

# the installed program, run from elsewhere, prints what the build's prints
trace=$src/traces/examples/mlp_train.json
(cd "$tmp" && "$installed" replay "$trace" --strategy=growth --format=json) >"$tmp/installed.json" 2>&1
"$bin" replay "$trace" --strategy=growth --format=json >"$tmp/built.json" 2>&1
if cmp -s "$tmp/installed.json" "$tmp/built.json" && grep -q '"peak_reserved_bytes": 2147483648' "$tmp/installed.json"; then
  ok
else
  bad "the installed gpusim prints otherwise: $(diff "$tmp/built.json" "$tmp/installed.json" | head -5)"
fi

# every command and every option of its --help in the man page (roff: "-" as "\-")
roff() { printf '%s' "$1" | sed 's/-/\\-/g'; }
commands=$("$installed" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }')
[ "$(printf '%s\n' "$commands" | wc -l)" -ge 10 ] && ok || bad "gpusim --help lists too few commands: $commands"
kinds=$("$installed" synth --help | awk '/^kinds:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }')
checked=0
check_help() { # check_help SECTION-HEADING ARGS...: ARGS' --help options are in the man page
  local heading=$1
  shift
  grep -qF -- "$heading" "$man" || bad "man page: no section $heading"
  local o
  for o in $("$installed" "$@" --help | awk '/^  --[a-z0-9-]+/ { o = $1; sub(/(=\.\.\.|\[=\.\.\.\])$/, "", o); print o }'); do
    checked=$((checked + 1))
    grep -qF -- "\\fB$(roff "$o")\\fR" "$man" || bad "man page: gpusim $* --help lists $o, the man page does not"
  done
}
for c in $commands; do
  check_help ".SH \"GPUSIM ${c^^}\"" "$c"
done
for k in $kinds; do
  check_help ".SS \"gpusim synth $k\"" synth "$k"
done
if [ "$checked" -ge 100 ]; then ok; else bad "only $checked options checked in the man page"; fi
if command -v man >/dev/null 2>&1; then
  if MANWIDTH=80 man -l "$man" 2>/dev/null | grep -q -- '--alloc-conf=...'; then ok; else bad "man -l cannot render $man"; fi
  # troff has nothing to warn about (a value list too long to break once warned)
  warnings=$(MANWIDTH=80 man --warnings -l "$man" 2>&1 >/dev/null)
  [ -z "$warnings" ] && ok || bad "man --warnings on $man: $(printf '%s' "$warnings" | head -c 400)"
else
  cli_skip_part "no man (man-db): the man page is not rendered"
fi

# SEE ALSO names only documents that are installed (paths under the prefix)
seealso=$(sed -n '/^\.SH SEE ALSO/,$p' "$man" | grep -o 'share/doc/gpusim/[A-Za-z0-9_./-]*')
[ -n "$seealso" ] && ok || bad "SEE ALSO names no installed document"
for d in $seealso; do
  [ -f "$prefix/$d" ] && ok || bad "SEE ALSO names $d, which is not installed"
done

# bash completion: the commands, a command's options, an option's values
complete_words() { # complete_words WORD...: COMPREPLY for the words, the last being completed
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _gpusim; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$completion" "$@"
}
want_completion() { # want_completion EXPECTED WORD...
  local want=$1
  shift
  local got
  got=$(complete_words "$@" | tr '\n' ' ')
  if [ "$got" = "$want " ]; then ok; else bad "completing '$*': got '$got', want '$want'"; fi
}
want_completion "replay" "$installed" rep
want_completion "$(printf '%s ' $commands)--help --version" "$installed" ""
want_completion "--alloc-conf=" "$installed" replay --alloc
want_completion "text json" "$installed" compare --format = ""
want_completion "greedy growth" "$installed" replay --strategy = g
want_completion "A100-40GB A100-80GB" "$installed" plan --gpus = A100
want_completion "transformer" "$installed" synth tr
want_completion "end peak oom" "$installed" replay --summary = ""

# the Python module, outside the source tree, finds the library beside the installed program
if ! command -v python3 >/dev/null 2>&1; then
  cli_skip_part "no python3: the Python module is not tried with the installed library"
elif ! ldd "$prefix/lib/libgpusim.so" 2>/dev/null | grep -q libasan; then
  mkdir -p "$tmp/py" && cp -r "$src/python/gpusim" "$tmp/py/"
  out=$(cd "$tmp" && env -u GPUSIM_LIBRARY PATH="$prefix/bin:$PATH" PYTHONPATH="$tmp/py" python3 -c '
import sys, gpusim, gpusim._native as n
r = gpusim.replay(sys.argv[1], strategy="growth")
print(n.library()._name, r["result"]["peak_reserved_bytes"])' "$trace" 2>&1)
  if [ "$out" = "$prefix/bin/../lib/libgpusim.so 2147483648" ] || [ "$out" = "$(realpath "$prefix")/lib/libgpusim.so 2147483648" ]; then
    ok
  else
    bad "the Python module with the installed library: $out"
  fi
fi
cli_finish
