#!/usr/bin/env bash
# CLI tests of `gpusim tune`: on the bundled pinning example the fixing setting
# (max_split_size_mb:20) ranks first and its paste line is printed; the example
# regenerates byte for byte from its script; output is the same for --jobs=1 and
# --jobs=4, in text and JSON; TensorFlow and JAX searches name their own lines;
# --goal=fit and --goal=no-oom; usage errors (exit 2) and an invalid trace (exit 3).
# Usage: cli_tune.sh GPUSIM_BINARY SOURCE_DIR
set -u
# shellcheck source-path=SCRIPTDIR source=cli_lib.sh
. "$(dirname "$0")/cli_lib.sh"
cli_setup "$@"
ex="$src/traces/examples/pinning-l4.jsonl"

# the example regenerates byte for byte from its script
if command -v python3 >/dev/null 2>&1; then
  python3 "$src/traces/examples/make_pinning.py" "$tmp/pin.jsonl" &&
    cmp -s "$tmp/pin.jsonl" "$ex" && ok || bad "traces/examples/make_pinning.py does not regenerate pinning-l4.jsonl"
fi

# the fixing setting ranks first, with its paste line; the current setting is in the table
if "$bin" tune "$ex" --jobs=1 >"$tmp/t1" 2>"$tmp/err"; then ok; else bad "tune failed: $(head -c 300 "$tmp/err")"; fi
grep -qE '^ +1  max_split_size_mb:20 ' "$tmp/t1" && ok || bad "max_split_size_mb:20 does not rank first: $(cat "$tmp/t1")"
grep -qx '    PYTORCH_ALLOC_CONF=max_split_size_mb:20' "$tmp/t1" && ok || bad "no paste line for the best setting"
grep -qE "PyTorch's defaults \(current\) +3\.10 GiB" "$tmp/t1" && ok || bad "the current setting's row is missing"
# it beats the defaults by what the pinned 270 MiB block cost: 3.10 GiB - 2.84 GiB
grep -qE '^ +1  .* 2\.84 GiB +-270\.00 MiB \(-8\.5%\)' "$tmp/t1" && ok || bad "the best row's numbers changed"
"$bin" tune "$ex" --jobs=4 >"$tmp/t4" 2>/dev/null
cmp -s "$tmp/t1" "$tmp/t4" && ok || bad "text differs between --jobs=1 and --jobs=4"
"$bin" tune "$ex" --format=json --jobs=1 >"$tmp/j1" 2>/dev/null
"$bin" tune "$ex" --format=json --jobs=3 >"$tmp/j3" 2>/dev/null
cmp -s "$tmp/j1" "$tmp/j3" && ok || bad "JSON differs between --jobs=1 and --jobs=3"
if command -v python3 >/dev/null 2>&1; then
  best=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); b=d["best"]
r=d["ranked"]; c=d["current"]
assert all(x["peak_reserved_bytes"] - c["peak_reserved_bytes"] == x["change_reserved_bytes"] for x in r)
print(b["setting"], b["env"], b["options"]["alloc_conf"], r[0]["setting"] == b["setting"], c["current"])' "$tmp/j1" 2>&1)
  [ "$best" = "max_split_size_mb:20 PYTORCH_ALLOC_CONF=max_split_size_mb:20 max_split_size_mb:20 True True" ] && ok ||
    bad "JSON best: $best"
fi
# --output writes the same as stdout
"$bin" tune "$ex" --jobs=2 --output="$tmp/o.txt" >/dev/null 2>&1
cmp -s "$tmp/t1" "$tmp/o.txt" && ok || bad "--output differs from stdout"
# --top=0 shows every row; the user's own setting is the current one
"$bin" tune "$ex" --top=0 >"$tmp/all" 2>/dev/null
grep -q 'more rows' "$tmp/all" && bad "--top=0 left rows out" || ok
"$bin" tune "$ex" --alloc-conf=max_split_size_mb:20 >"$tmp/cur" 2>/dev/null
# (with it, garbage collection under a fraction may go lower still: rank 1 or 2)
grep -qE '^ +[12]  max_split_size_mb:20 \(current\) +2\.84 GiB  = ' "$tmp/cur" && ok ||
  bad "the current max_split_size_mb:20 is not the current row near the top: $(cat "$tmp/cur")"

# TensorFlow: the smallest memory_limit, pasted as a tf.config line; JAX: its variables
"$bin" tune "$ex" --framework=tf >"$tmp/tf" 2>/dev/null
grep -qE '^ +1  memory_limit=[0-9]+ ' "$tmp/tf" && ok || bad "tf: memory_limit does not rank first: $(cat "$tmp/tf")"
grep -q "tf.config.set_logical_device_configuration(tf.config.list_physical_devices('GPU')\[0\], \[tf.config.LogicalDeviceConfiguration(memory_limit=" "$tmp/tf" && ok ||
  bad "tf: no tf.config paste line"
grep -q 'allow_growth=true' "$tmp/tf" && ok || bad "tf: growth not tried"
# the limit found runs and a MiB less does not (one region of exactly the limit)
lim=$(sed -nE 's/^ +1  memory_limit=([0-9]+) .*/\1/p' "$tmp/tf")
if [ -n "$lim" ]; then
  "$bin" replay "$ex" --strategy=limit --limit="${lim}MiB" --fail-on-oom >/dev/null 2>&1 && ok || bad "tf: memory_limit=$lim does not run"
  "$bin" replay "$ex" --strategy=limit --limit="$((lim - 1))MiB" --fail-on-oom >/dev/null 2>&1 && bad "tf: $((lim - 1)) MiB runs too" || ok
fi
"$bin" tune "$ex" --framework=jax >"$tmp/jax" 2>/dev/null
grep -q 'XLA_PYTHON_CLIENT_PREALLOCATE=false' "$tmp/jax" && grep -q 'XLA_PYTHON_CLIENT_MEM_FRACTION=' "$tmp/jax" && ok ||
  bad "jax: its settings are missing: $(cat "$tmp/jax")"

# the effective limit: the current setting's in the header, each setting's in its row and
# in the JSON. TF on an L4 (compute capability 8) with the default context (256 MiB under
# CUDA 12): 23690477568 B - 268435456 B - 1536 MiB reserve = 21811429376 B = 20.31 GiB;
# memory_limit=M is its own limit
grep -qF "  device  L4: capacity 22.06 GiB, context 256.00 MiB per process, allocator limit 20.31 GiB (TF preset: capacity - 256.00 MiB context - 1536 MiB reserve) under the current setting" "$tmp/tf" &&
  ok || bad "tf: the header's limit: $(head -4 "$tmp/tf")"
grep -qE '^ +1  memory_limit=([0-9]+) .* 2\.84 GiB  no$' "$tmp/tf" && ok || bad "tf: memory_limit's row has not its limit: $(cat "$tmp/tf")"
# JAX's defaults are the jax preset's (not TF's reserve): 0.75 x 23690477568 B =
# 17767858176 B, up to a multiple of 2 MiB: 8473 x 2097152 B = 17769168896 B = 16.55 GiB
grep -qE "JAX's defaults \(preallocate\) \(current\) +16\.55 GiB  = +16\.55 GiB  no" "$tmp/jax" && ok ||
  bad "jax: the defaults are not JAX's 0.75: $(cat "$tmp/jax")"
if command -v python3 >/dev/null 2>&1; then
  "$bin" tune "$ex" --framework=jax --format=json >"$tmp/jj" 2>/dev/null
  got=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); c=d["current"]
assert all("limit_bytes" in r and r["limit_source"] for r in d["ranked"])
print(c["limit_bytes"], c["limit_source"])' "$tmp/jj" 2>&1)
  [ "$got" = "17769168896 JAX preset: 0.75 x 22.06 GiB, rounded up to 2 MiB" ] && ok || bad "jax JSON limit: $got"
fi

# fit: the headroom on the card; no-oom on a card too small for the defaults
expect_any 0 "headroom" tune "$ex" --goal=fit --gpu=T4
"$bin" tune "$ex" --goal=no-oom --capacity=2900MiB >"$tmp/no" 2>/dev/null
grep -qE "PyTorch's defaults \(current\) .* [0-9]+ \(fragmentation\)" "$tmp/no" && ok || bad "no-oom: the defaults' OOMs are not counted"
grep -q 'which runs where the current setting runs out of memory' "$tmp/no" && ok || bad "no-oom: no fixing setting"

# usage errors and an invalid trace
expect 2 "--goal=fit needs the card" tune "$ex" --goal=fit
expect 2 "--framework=mxnet" tune "$ex" --framework=mxnet
expect 2 "--goal=small" tune "$ex" --goal=small
expect 2 "is not an allocator of --framework=torch" tune "$ex" --strategy=growth
expect 2 "--top=x" tune "$ex" --top=x
expect 2 "no trace" tune
expect 2 "" tune "$ex" --limit=4GiB
printf '{"format":"gpusim-trace","version":1}\n{"op":"free","id":7,"t":1}\n' >"$tmp/bad.jsonl"
expect 3 "" tune "$tmp/bad.jsonl"
cli_finish
