#!/usr/bin/env python3
"""suite.py - runs the fixed validation suite (validate/README.md) and packs what it
measured. Called by run-on-gpu.sh; --dry-run runs the same plan without a GPU
(replay_cuda on its mock backend, the Python replayers with --check-only) to test
the plan's logic. Everything goes to a work folder; OUT receives at most six files
(the device tool returns at most eight): results.tar.gz (all of it), report.txt,
report.json, probes.json, status.json, log.txt."""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import gen_traces  # noqa: E402

DEFAULT_JAX_FRACTION = 0.05   # for traces without a cap: a limit well above their peak, far below the card
JAX_MAX_MOVED = 40 << 30      # JAX copies every allocation from the host: skip traces that move more


def parse_args(argv):
    p = argparse.ArgumentParser(description="run the validation suite")
    p.add_argument("--out", default=os.environ.get("OUT") or os.path.join(ROOT, "validate", "results", "new"))
    p.add_argument("--work", default=None, help="work folder (default: OUT/../gpusim-validate-work or /tmp)")
    p.add_argument("--bin", default=None, help="folder with gpusim and replay_cuda")
    p.add_argument("--python", default=sys.executable)
    p.add_argument("--dry-run", action="store_true")
    p.add_argument("--deadline", type=float, default=330.0, help="seconds; later runs are skipped (recorded)")
    p.add_argument("--run-timeout", type=float, default=90.0)
    p.add_argument("--only", default=None, help="comma-separated trace names (tests)")
    return p.parse_args(argv)


class Suite:
    def __init__(self, a):
        self.a = a
        self.t0 = time.time()
        self.log_lines = []
        self.status = []

    def log(self, msg):
        line = "[%6.1fs] %s" % (time.time() - self.t0, msg)
        self.log_lines.append(line)
        print(line, flush=True)

    def run(self, name, cmd, out_json=None, env=None):
        if time.time() - self.t0 > self.a.deadline:
            self.status.append({"run": name, "status": "skipped (deadline)", "cmd": cmd})
            self.log("SKIP %s (deadline)" % name)
            return False
        e = dict(os.environ)
        e.update(env or {})
        e["PYTHONUNBUFFERED"] = "1"
        t = time.time()
        try:
            r = subprocess.run(cmd, env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               timeout=self.a.run_timeout, text=True)
            rc, out = r.returncode, r.stdout
        except subprocess.TimeoutExpired as x:
            rc, out = "timeout", (x.stdout or b"").decode() if isinstance(x.stdout, bytes) else (x.stdout or "")
        dt = time.time() - t
        ok = rc == 0 and (out_json is None or os.path.exists(out_json))
        self.status.append({"run": name, "status": "ok" if ok else "failed", "rc": rc, "seconds": round(dt, 2),
                            "cmd": cmd, "output": out[-2000:]})
        self.log("%s %s (%.1fs, rc=%s)%s" % ("OK  " if ok else "FAIL", name, dt, rc,
                                            "" if ok else "\n" + out[-1500:]))
        return ok


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    s = Suite(a)
    out = os.path.abspath(a.out)
    work = os.path.abspath(a.work or os.path.join("/tmp", "gpusim-validate-work"))
    if os.path.exists(work):
        shutil.rmtree(work)
    traces = os.path.join(work, "traces")
    meas = os.path.join(work, "measured")
    os.makedirs(traces)
    os.makedirs(meas)
    os.makedirs(out, exist_ok=True)
    binp = a.bin or os.path.join(ROOT, "build")
    gpusim = os.path.join(binp, "gpusim")
    replay = os.path.join(binp, "replay_cuda")
    if not os.path.exists(replay):
        replay = os.path.join(binp, "validate", "replay_cuda")
    mock = ["--backend=mock", "--mock-capacity=143156MiB", "--mock-context=500MiB"] if a.dry_run else []
    s.log("suite: out=%s work=%s bin=%s dry_run=%s" % (out, work, binp, a.dry_run))

    # 1. traces: the generated suite and the bundled examples
    gen_traces.main([traces])
    with open(os.path.join(traces, "suite.json")) as f:
        suite = json.load(f)
    for ex in sorted(glob.glob(os.path.join(ROOT, "traces", "examples", "*.json*"))):
        shutil.copy(ex, traces)
        suite.append({"trace": os.path.basename(ex), "cap_bytes": None, "what": "bundled example"})
    if a.only:
        keep = set(a.only.split(","))
        suite = [x for x in suite if x["trace"].split(".")[0].replace("validate-", "") in keep]

    # 2. the driver, and the total the memory fractions are computed from
    probes = os.path.join(work, "probes.json")
    s.run("probes", [replay, "--probe", "--output=" + probes] + mock, probes)
    total = 143156 * (1 << 20)
    try:
        with open(probes) as f:
            total = json.load(f)["device"]["total_global_mem"] or total
    except (OSError, ValueError, KeyError):
        s.log("no probes: fractions computed from %d B" % total)
    strategies = ""
    try:
        strategies = subprocess.run([gpusim, "strategies"], stdout=subprocess.PIPE, text=True).stdout
    except OSError:
        pass
    have_torch_model = "\ntorch" in "\n" + strategies or " torch " in strategies

    def frac(cap, default=None):
        return repr(cap / total) if cap else default

    # 3. the runs: fast C runs first, then PyTorch, then JAX
    import vtrace  # noqa: E402
    plan = []
    for x in suite:
        tr = os.path.join(traces, x["trace"])
        stem = x["trace"].split(".")[0]
        example = x["what"] == "bundled example"
        _, evs = vtrace.load(tr)
        summ = vtrace.summary(evs)
        moved = sum(e.get("size", 0) for e in evs if e["op"] == "alloc")
        # no cap: a BFC limit of twice the trace's peak (at least 5 %, at most half the card)
        jf = frac(x["cap_bytes"], repr(min(0.5, max(DEFAULT_JAX_FRACTION,
                                                    2.0 * summ["peak_requested_bytes"] / total))))
        tf = frac(x["cap_bytes"])
        k = 1 if example else 0  # within each kind, the generated suite first: the deadline cuts examples
        plan.append((0, stem + ".cuda-raw", [replay, tr, "--mode=raw"] + mock))
        plan.append((0, stem + ".cuda-async", [replay, tr, "--mode=async"] + mock))
        plan.append((0, stem + ".mirror-growth", [replay, tr, "--mode=mirror", "--strategy=growth",
                                                  "--bfc-preset=jax", "--mem-fraction=" + jf] + mock))
        if have_torch_model:
            plan.append((0, stem + ".mirror-torch", [replay, tr, "--mode=mirror", "--strategy=torch"] +
                         (["--memory-fraction=" + tf] if tf else []) + mock))
        for conf, tag in (("", "torch"),) + ((() if example else (("expandable_segments:True", "torch-expandable"),))):
            cmd = [a.python, os.path.join(HERE, "torch_replay.py"), tr, "--alloc-conf=" + conf]
            if tf:
                cmd.append("--memory-fraction=" + tf)
            if stem == "validate-streams" and not conf:
                cmd.append("--history=" + os.path.join(meas, stem + ".torch.snapshot.pickle"))
            plan.append((2 + k, stem + "." + tag, cmd))
        if moved > JAX_MAX_MOVED:
            s.status.append({"run": stem + ".jax-*", "status": "skipped (%d GiB of host-to-device copies; over "
                                                              "the budget)" % (moved >> 30)})
            continue
        for pre in ("false", "true"):
            plan.append((4 + k, stem + ".jax-" + ("greedy" if pre == "true" else "growth"),
                         [a.python, os.path.join(HERE, "jax_replay.py"), tr, "--preallocate=" + pre,
                          "--mem-fraction=" + jf]))
    plan.sort(key=lambda p: 0 if p[0] <= 1 else p[0])  # stable: C runs, torch, torch examples, JAX, JAX examples
    measured = []
    for kind, name, cmd in plan:
        dest = os.path.join(meas, name + ".json")
        if kind == 0:
            ok = s.run(name, cmd + ["--output=" + dest], dest)
        elif a.dry_run:
            ok = s.run(name, cmd + ["--check-only"])
            dest = None
        else:
            ok = s.run(name, cmd + ["--output=" + dest], dest)
        if ok and dest:
            measured.append(dest)

    # 4. predicted vs measured
    for fmt, name in (("text", "report.txt"), ("json", "report.json")):
        dest = os.path.join(work, name)
        if measured:
            s.run("validate-report " + fmt, [gpusim, "validate-report", "--traces=" + traces, "--format=" + fmt,
                                             "--output=" + dest] + measured, dest)
    s.log("done: %d measurements, %d runs failed, %d skipped" % (
        len(measured), sum(1 for x in s.status if x["status"] == "failed"),
        sum(1 for x in s.status if x["status"].startswith("skipped"))))

    # 5. pack
    with open(os.path.join(work, "status.json"), "w") as f:
        json.dump({"dry_run": a.dry_run, "total_bytes_for_fractions": total, "runs": s.status}, f, indent=1)
    with open(os.path.join(work, "log.txt"), "w") as f:
        f.write("\n".join(s.log_lines) + "\n")
    with tarfile.open(os.path.join(out, "results.tar.gz"), "w:gz") as t:
        t.add(work, arcname="results")
    for name in ("report.txt", "report.json", "probes.json", "status.json", "log.txt"):
        p = os.path.join(work, name)
        if os.path.exists(p):
            shutil.copy(p, out)
    if os.path.exists(os.path.join(work, "report.txt")):
        with open(os.path.join(work, "report.txt")) as f:
            sys.stdout.write(f.read()[-6000:])
    return 0 if measured else 1


if __name__ == "__main__":
    sys.exit(main())
