#!/usr/bin/env bash
# The layering rule of docs/design.md §1, checked on every source: a file may include
# headers of its own layer and of the layers below it, never above. Layers, bottom up:
#   sim < strategies, traces < traces/synth < answers < reports < sweep < cli < validate
# (strategies and traces are side by side: neither includes the other).
# Usage: check_layers.sh ROOT. Prints each violation as FILE:LINE: LAYER includes HEADER.
set -uo pipefail
root=${1:-$(dirname "$0")/..}
cd "$root" || exit 2

# allowed include prefixes per layer (the layer's own folder and those below it)
allowed() {
  case $1 in
    sim) echo "sim" ;;
    strategies) echo "sim strategies" ;;
    traces) echo "sim traces" ;;
    traces/synth) echo "sim traces traces/synth" ;;
    answers) echo "sim strategies traces answers" ;;
    reports) echo "sim strategies traces answers reports" ;;
    sweep) echo "sim strategies traces traces/synth answers reports sweep" ;;
    cli) echo "sim strategies traces traces/synth answers reports sweep cli" ;;
    validate) echo "sim strategies traces traces/synth answers reports sweep cli validate" ;;
  esac
}

violations=0
checked=0
for layer in sim strategies traces traces/synth answers reports sweep cli validate; do
  [ -d "$layer" ] || continue
  ok=$(allowed "$layer")
  for f in "$layer"/*.c "$layer"/*.h; do
    [ -f "$f" ] || continue
    checked=$((checked + 1))
    while IFS=: read -r line inc; do
      case $inc in
        */*) ;;               # a path from the root: check it below
        *) continue ;;        # a header beside the file: its own layer
      esac
      dir=${inc%/*}
      pass=0
      for p in $ok; do
        if [ "$dir" = "$p" ]; then pass=1; fi
      done
      if [ "$pass" -eq 0 ]; then
        echo "$f:$line: $layer includes $inc" >&2
        violations=$((violations + 1))
      fi
    done < <(grep -n '^#include "' "$f" | sed -E 's/^([0-9]+):#include "([^"]+)".*/\1:\2/')
  done
done

if [ "$checked" -eq 0 ]; then
  echo "check_layers: no sources found under $root" >&2
  exit 1
fi
if [ "$violations" -ne 0 ]; then
  echo "check_layers: $violations include(s) reach a layer above their own ($checked files checked)" >&2
  exit 1
fi
echo "check_layers: $checked files, every include points at its own layer or below"
