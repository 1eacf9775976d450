#!/usr/bin/python3
"""Simulator speed benchmarks of hcsim (docs/performance.md). Not part of ctest.

Each case runs one process under /usr/bin/time -v and reports the task count, wall time,
CPU time (user + system, the process and its forked engine child), peak RSS (the largest
process; the engine child maps the parent's task graph, so it counts it too) and tasks/s.
The machine is shared: wall time includes waiting for a core, so the CPU time is given too.

Cases (run.sh --list):
  gpt3       GPT-3 175B, 1,024 A100, TP8 PP8 DP16 interleaved, event mode (target <= 2 s, 1 GiB)
  llama405   Llama-3 405B, 16,384 H100, TP8 PP16 DP128, event mode (target <= 10 s, 4 GiB)
  scaling    Llama-3 70B from 64 to 16,384 H100, event mode; exponent of time vs tasks (<= 1.1)
  flow       the GPT-3 case in flow mode without symmetry, the whole step (target <= 5 min),
             after a quarter of it (batch 384) for the growth with the batch
  search     every valid layout of the 530B GPT within 5,128 A100, fast analytical path
             (target >= 50,000 layouts/s on one core)
  search-cli the user command `hcsim search scenarios/bench/megatron-530b-search.json -j 1`
             (screen and bounded event-mode confirmation; issue 19's targets: the screen at
             >= 100,000 layouts/s (its rate from the command's summary line, in the
             layouts/s wall column), no slower than Calculon's llm-optimal-execution of the
             same question on the same machine, which this script does not run, and peak
             RSS <= 300 MB)
  deepseek   DeepSeek-V3 on 2,048 H800 (EP 64, PP 16, DualPipe, DeepEP dispatch), event mode
             (target <= 10 s), then analytical and flow mode (~8 min) and their step times
             against event's (target: within 2 %)
  frontier   the Llama-3 405B benchmark from 8,192 to 131,072 H100 (DP 64 to 1,024, 16
             micro-batches per replica), event mode with symmetry, each point the median of 7
             runs taken in turn (targets: 65,536 <= 5 s, 131,072 <= 10 s and 2 GiB); exponent of time vs
             devices
  frontier-flow  the frontier series in flow mode by phases (simulation.flow_schedule "phases"),
             8,192 to 131,072 H100, each run stopped at 10 min (issue 19's target: 131,072
             within 5 min); step time and bubble against event mode's; at 8,192 and 16,384
             also with every flow in the network model (simulation.representative_flows
             false), its time and its step against the representative flows'
  million    the same scenario in analytical mode from 131,072 to 1,048,576 H100 (DP 1,024
             to 8,192; max_tasks raised past the collective-schedule bound); target: the
             1,048,576-GPU run under 1 s; at 131,072 and 1,048,576 also with --out (report.json
             holds every device)
"""
import argparse
import json
import math
import os
import platform
import re
import subprocess
import tempfile
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
GIB = 1024.0 ** 3

# Llama-3 70B (TP 8) from 64 to 16,384 devices: PP and DP grow in turn, micro-batches per
# replica m grow with PP (m >= 2 PP keeps the 1F1B bubble near a third), global batch = m DP.
SCALING = [  # devices, pp, dp, global batch
    (64, 2, 4, 32), (128, 4, 4, 64), (256, 4, 8, 128), (512, 8, 8, 256), (1024, 8, 16, 512),
    (2048, 16, 16, 1024), (4096, 16, 32, 2048), (8192, 16, 64, 4096), (16384, 16, 128, 8192),
]
SCALING_BASE = "scenarios/bench/llama3-70b-h100-scaling.json"
FLOW_BATCHES = [384, 1536]  # global batches run in flow mode (the full step has 1,536)
# The Llama-3 405B benchmark (TP 8, PP 16) with DP from 64 to 1,024 and 16 micro-batches per
# replica (global batch 16 DP, 2,048 at the benchmark's DP 128; below DP 64 ZeRO-3 shards too
# few ranks to fit in memory): the task graph is the same
# at every point, so what grows is the work per device.
FRONTIER_DP = [64, 128, 256, 512, 1024]
FRONTIER_BASE = "scenarios/bench/llama3-405b-h100-16384.json"
MILLION_DP = [1024, 2048, 4096, 8192]  # analytical mode, 128 GPUs per replica: up to 1,048,576


def timed(cmd, timeout):
    """Runs cmd under /usr/bin/time -v; returns (stdout, metrics dict)."""
    t0 = time.monotonic()
    p = subprocess.run(["/usr/bin/time", "-v"] + cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")

    def field(name):
        m = re.search(re.escape(name) + r":\s*([0-9.:]+)", p.stderr)
        return m.group(1) if m else "0"

    cpu = float(field("User time (seconds)")) + float(field("System time (seconds)"))
    return p.stdout, {"wall_s": wall, "cpu_s": cpu, "rss_bytes": float(field("Maximum resident set size (kbytes)")) * 1024}


class Stopped(RuntimeError):
    """hcsim stopped at its time limit (run_hcsim's `limit`)."""


def run_hcsim(build, scenario, sets=(), timeout=3600, limit=None, args=()):
    """`limit`: seconds after which `timeout` stops hcsim itself (raises Stopped); `args`: more
    options of `hcsim run` (--out DIR)."""
    cmd = [os.path.join(build, "hcsim"), "run", scenario, *args]
    if limit:
        cmd = ["timeout", str(limit)] + cmd
    for s in sets:
        cmd += ["--set", s]
    try:
        out, m = timed(cmd, timeout)
    except RuntimeError as e:
        if limit and "failed (124)" in str(e):
            raise Stopped(str(e)) from e
        raise
    sim = re.search(r"simulated in ([0-9.]+) s \((\w+) mode, (\d+) tasks, (\d+) engine activities", out)
    step = re.search(r"step time\s+([0-9.]+ \S+)", out)
    if not sim:
        raise RuntimeError("no 'simulated in' line in hcsim's output:\n" + out[-2000:])
    m.update(tasks=int(sim.group(3)), activities=int(sim.group(4)), step=step.group(1) if step else "?")
    return m


def row(name, m, target=""):
    tasks = int(m.get("tasks", 0))
    return (f"{name:<28} {tasks:>10,} {m['wall_s']:>9.2f} {m['cpu_s']:>9.2f} {m['rss_bytes'] / GIB:>8.3f} "
            f"{tasks / m['wall_s']:>11,.0f} {tasks / max(m['cpu_s'], 1e-9):>11,.0f}  {target}")


HEADER = (f"{'case':<28} {'tasks':>10} {'wall s':>9} {'CPU s':>9} {'RSS GiB':>8} {'tasks/s':>11} "
          f"{'tasks/CPUs':>11}  target")


def verdict(ok):
    return "met" if ok else "MISSED"


def case_gpt3(build, res):
    m = run_hcsim(build, "scenarios/gpt3-175b-a100-1024.json")
    ok = m["wall_s"] <= 2 and m["rss_bytes"] <= GIB
    res["gpt3"] = m
    print(row("gpt3-175b 1024 A100 event", m, f"<= 2 s, 1 GiB: {verdict(ok)} (CPU {m['cpu_s']:.2f} s)"), flush=True)


def case_deepseek(build, res):
    sc = "scenarios/deepseek-v3-h800-2048.json"
    m = run_hcsim(build, sc)
    res["deepseek"] = {"event": m}
    print(row("deepseek-v3 2048 H800 event", m, f"<= 10 s: {verdict(m['wall_s'] <= 10)} (CPU {m['cpu_s']:.2f} s)"), flush=True)
    event = parse_seconds(m["step"])
    for mode in ("analytical", "flow"):
        o = run_hcsim(build, sc, [f'/simulation/mode="{mode}"'])
        res["deepseek"][mode] = o
        r = parse_seconds(o["step"]) / event
        print(row(f"deepseek-v3 2048 H800 {mode}", o, f"step {o['step']}, {r:.4f} x event: within 2 %: "
                  f"{verdict(abs(r - 1) <= 0.02)}"), flush=True)


def parse_seconds(text):
    value, unit = text.split()
    return float(value) * {"s": 1.0, "ms": 1e-3, "us": 1e-6}[unit]


def case_llama405(build, res):
    m = run_hcsim(build, "scenarios/bench/llama3-405b-h100-16384.json")
    ok = m["wall_s"] <= 10 and m["rss_bytes"] <= 4 * GIB
    res["llama405"] = m
    print(row("llama3-405b 16384 H100 event", m, f"<= 10 s, 4 GiB: {verdict(ok)} (CPU {m['cpu_s']:.2f} s)"), flush=True)


def fit_exponent(xs, ys):
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    sxx = sum((a - mx) ** 2 for a in lx)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / sxx if sxx > 0 else float("nan")


def case_scaling(build, res):
    pts = []
    for devices, pp, dp, gb in SCALING:
        m = run_hcsim(build, SCALING_BASE, [f"/cluster/pools/0/count={devices}", f"/strategy/pp={pp}",
                                            f"/strategy/dp={dp}", f"/workload/global_batch={gb}"])
        m.update(devices=devices, pp=pp, dp=dp, global_batch=gb)
        pts.append(m)
        print(row(f"scaling {devices} (pp {pp} dp {dp})", m), flush=True)
    tasks = [p["tasks"] for p in pts]
    fit = {
        "wall_vs_tasks": fit_exponent(tasks, [p["wall_s"] for p in pts]),
        "cpu_vs_tasks": fit_exponent(tasks, [p["cpu_s"] for p in pts]),
        "cpu_vs_activities": fit_exponent([p["activities"] for p in pts], [p["cpu_s"] for p in pts]),
        "cpu_vs_devices": fit_exponent([p["devices"] for p in pts], [p["cpu_s"] for p in pts]),
    }
    # Up to the last point whose task count exceeds every earlier one: past it, symmetry keeps
    # the task count while devices grow (data-parallel replicas are not built).
    last = max(i for i, p in enumerate(pts) if all(p["tasks"] > q["tasks"] for q in pts[:i]))
    head = pts[:last + 1]
    fit["wall_vs_tasks_while_tasks_grow"] = fit_exponent([p["tasks"] for p in head], [p["wall_s"] for p in head])
    fit["cpu_vs_tasks_while_tasks_grow"] = fit_exponent([p["tasks"] for p in head], [p["cpu_s"] for p in head])
    res["scaling"] = {"points": pts, "exponents": fit}
    print(f"  growth exponents (least squares on log-log): wall vs tasks {fit['wall_vs_tasks']:.2f}, CPU vs tasks "
          f"{fit['cpu_vs_tasks']:.2f}, CPU vs engine activities {fit['cpu_vs_activities']:.2f}, CPU vs devices "
          f"{fit['cpu_vs_devices']:.2f}; target <= 1.1 vs tasks: {verdict(fit['wall_vs_tasks'] <= 1.1)}\n"
          f"  up to {head[-1]['devices']} devices (task count still growing): wall vs tasks "
          f"{fit['wall_vs_tasks_while_tasks_grow']:.2f}, CPU vs tasks {fit['cpu_vs_tasks_while_tasks_grow']:.2f}",
          flush=True)


# Runs per frontier point: a single sub-second run on a shared VM spreads by a factor of up to 2
# (the kernel's page zeroing), enough to swing the exponent by 0.2; the point is the median run.
# The points are run in turn, one run of each per round, so that a slow spell of the machine
# falls on every point alike rather than on the few points run during it.
FRONTIER_REPEATS = 7


def case_frontier(build, res):
    pts = []
    rounds = {dp: [] for dp in FRONTIER_DP}
    for _ in range(FRONTIER_REPEATS):
        for dp in FRONTIER_DP:
            rounds[dp].append(run_hcsim(build, FRONTIER_BASE, [f"/cluster/pools/0/count={dp * 128}",
                                                               f"/strategy/dp={dp}",
                                                               f"/workload/global_batch={16 * dp}"]))
    for dp in FRONTIER_DP:
        devices = dp * 128
        runs = rounds[dp]
        runs.sort(key=lambda r: r["wall_s"])
        m = runs[len(runs) // 2]
        m.update(devices=devices, dp=dp, wall_runs_s=[r["wall_s"] for r in runs])
        pts.append(m)
        target = ""
        if devices == 65536:
            target = f"<= 5 s: {verdict(m['wall_s'] <= 5)}"
        if devices == 131072:
            target = f"<= 10 s, 2 GiB: {verdict(m['wall_s'] <= 10 and m['rss_bytes'] <= 2 * GIB)}"
        print(row(f"frontier {devices} (dp {dp})", m, target) + f"  activities {m['activities']:,}", flush=True)
    fit = fit_exponent([p["devices"] for p in pts], [p["wall_s"] for p in pts])
    tail = fit_exponent([p["devices"] for p in pts[-3:]], [p["wall_s"] for p in pts[-3:]])
    res["frontier"] = {"points": pts, "wall_vs_devices": fit, "wall_vs_devices_last_three": tail}
    print(f"  wall vs devices (least squares on log-log): {fit:.2f} over the series, {tail:.2f} over the last "
          f"three points (goal <= 0.3 once the task graph stops growing: {verdict(tail <= 0.3)})", flush=True)


def case_frontier_flow(build, res):
    pts = []
    for dp in FRONTIER_DP:
        devices = dp * 128
        sets = [f"/cluster/pools/0/count={devices}", f"/strategy/dp={dp}", f"/workload/global_batch={16 * dp}"]
        event = run_hcsim(build, FRONTIER_BASE, sets)
        target = "<= 300 s: " if devices == 131072 else ""
        try:
            m = run_hcsim(build, FRONTIER_BASE, sets + ["/simulation/mode=flow", "/simulation/flow_schedule=phases"],
                          limit=600)
        except Stopped:
            pts.append({"devices": devices, "dp": dp, "wall_s": None})
            print(f"{'flow by phases ' + str(devices):<28} {'':>10} {'> 600':>9}  {target}{verdict(False)} "
                  f"(stopped at 10 min)", flush=True)
            break
        r = parse_seconds(m["step"]) / parse_seconds(event["step"])
        m.update(devices=devices, dp=dp, event_step=event["step"], step_vs_event=r)
        pts.append(m)
        if target:
            target += verdict(m["wall_s"] <= 300)
        print(row(f"flow by phases {devices}", m, target) + f"  activities {m['activities']:,}, step {m['step']} "
              f"({r:.4f} x event's)", flush=True)
        if devices <= 16384:
            every = run_hcsim(build, FRONTIER_BASE, sets + ["/simulation/mode=flow", "/simulation/flow_schedule=phases",
                                                            "/simulation/representative_flows=false"], limit=600)
            m["every_flow"] = every
            r = parse_seconds(m["step"]) / parse_seconds(every["step"])
            print(row(f"  every flow {devices}", every) + f"  activities {every['activities']:,}, step {every['step']} "
                  f"(representative flows' step {r:.4f} x this)", flush=True)
    done = [p for p in pts if p["wall_s"]]
    fit = fit_exponent([p["devices"] for p in done], [p["wall_s"] for p in done]) if len(done) > 1 else float("nan")
    res["frontier-flow"] = {"points": pts, "wall_vs_devices": fit}
    print(f"  wall vs devices (least squares on log-log, runs that finished): {fit:.2f}", flush=True)


def case_million(build, res):
    pts = []
    for dp in MILLION_DP:
        devices = dp * 128
        sets = [f"/cluster/pools/0/count={devices}", f"/strategy/dp={dp}", f"/workload/global_batch={16 * dp}",
                "/simulation/mode=analytical", "/simulation/max_tasks=10000000000"]
        m = run_hcsim(build, FRONTIER_BASE, sets)
        m.update(devices=devices, dp=dp)
        pts.append(m)
        target = f"<= 1 s: {verdict(m['wall_s'] <= 1)}" if devices == 1048576 else ""
        print(row(f"analytical {devices} (dp {dp})", m, target) + f"  step {m.get('step', '?')}", flush=True)
        if dp in (1024, 8192):  # the same with the reports written: report.json holds every device
            with tempfile.TemporaryDirectory() as out:
                w = run_hcsim(build, FRONTIER_BASE, sets, args=["--out", out])
                size = os.path.getsize(os.path.join(out, "report.json"))
            m["with_out"] = {"wall_s": w["wall_s"], "rss_bytes": w["rss_bytes"], "report_json_bytes": size}
            print(row(f"  + --out ({size / 1e9:.2f} GB json)", w), flush=True)
    fit = fit_exponent([p["devices"] for p in pts], [p["wall_s"] for p in pts])
    res["million"] = {"points": pts, "wall_vs_devices": fit}
    print(f"  wall vs devices (least squares on log-log): {fit:.2f}", flush=True)


def case_flow(build, res):
    pts = []
    for gb in FLOW_BATCHES:
        m = run_hcsim(build, "scenarios/gpt3-175b-a100-1024.json",
                      ["/simulation/symmetry=false", "/simulation/mode=flow", f"/workload/global_batch={gb}"], 7200)
        m["global_batch"] = gb
        pts.append(m)
        target = f"<= 300 s: {verdict(m['wall_s'] <= 300)} (CPU {m['cpu_s']:.0f} s)" if gb == 1536 else ""
        print(row(f"flow, no symmetry, batch {gb}", m, target), flush=True)
    p0, p1 = pts[0], pts[-1]
    growth = fit_exponent([p0["tasks"], p1["tasks"]], [p0["cpu_s"], p1["cpu_s"]])
    res["flow"] = {"points": pts, "cpu_vs_tasks": growth}
    print(f"  growth from batch {p0['global_batch']} to {p1['global_batch']}: CPU vs tasks {growth:.2f}", flush=True)


def case_search(build, res):
    out, m = timed([os.path.join(build, "bench", "hcsim_bench_search"), "scenarios/bench/megatron-530b-a100-2520.json",
                    "5128"], 3600)
    r = dict(kv.split("=") for kv in re.search(r"RESULT (.*)", out).group(1).split())
    r = {k: float(v) for k, v in r.items()}
    r.update(process_wall_s=m["wall_s"], process_cpu_s=m["cpu_s"], rss_bytes=m["rss_bytes"])
    res["search"] = r
    per_cpu = r["configs"] / r["search_cpu_s"]
    per_wall = r["configs"] / r["search_wall_s"]
    print("  " + out.strip().replace("\n", "\n  ").split("\n  RESULT")[0])
    print(f"{'search 530B, <= 5128 A100':<28} {int(r['configs']):>10,} {r['search_wall_s']:>9.2f} "
          f"{r['search_cpu_s']:>9.2f} {m['rss_bytes'] / GIB:>8.3f} {per_wall:>11,.0f} {per_cpu:>11,.0f}  "
          f">= 50,000 layouts/s: {verdict(per_wall >= 50000)} by wall, {verdict(per_cpu >= 50000)} by CPU", flush=True)


def case_search_cli(build, res):
    import tempfile
    with tempfile.TemporaryDirectory() as out_dir:
        out, m = timed([os.path.join(build, "hcsim"), "search", "scenarios/bench/megatron-530b-search.json", "-j", "1",
                        "--out", out_dir, "-q"], 3600)
    s = re.search(r"search: (\d+) candidate layouts.*?, (\d+) feasible after screening.*?, (\d+) confirmed", out)
    if not s:
        raise RuntimeError("no 'search:' line in hcsim's output:\n" + out[-2000:])
    m.update(candidates=int(s.group(1)), feasible=int(s.group(2)), confirmed=int(s.group(3)))
    screen = re.search(r"the screen ([0-9.]+) s, (\d+) layouts/s", out)
    if not screen:
        raise RuntimeError("no screen rate in hcsim's 'search:' line:\n" + out[-2000:])
    m.update(screen_s=float(screen.group(1)), screen_layouts_per_s=int(screen.group(2)))
    res["search-cli"] = m
    print(f"{'hcsim search 530B, -j 1':<28} {m['candidates']:>10,} {m['wall_s']:>9.2f} {m['cpu_s']:>9.2f} "
          f"{m['rss_bytes'] / GIB:>8.3f} {m['screen_layouts_per_s']:>11,} {'':>11}  {m['confirmed']} confirmed of "
          f"{m['feasible']} feasible; screen >= 100,000 layouts/s: {verdict(m['screen_layouts_per_s'] >= 100000)}; "
          f"<= 300 MB: {verdict(m['rss_bytes'] <= 300e6)}", flush=True)


def case_cluster(build, res):
    """The shipped 4,096-GPU cluster study (docs/cluster.md): 1,000 jobs over 30 days under each
    scheduler, the user command as run; goal: under a minute each."""
    res["cluster"] = {}
    for sched in ("fifo", "backfill", "heterogeneity-aware"):
        out, m = timed([os.path.join(build, "hcsim"), "cluster", "run", "scenarios/cluster/mixed-4096.json",
                        "scenarios/cluster/mixed-4096-jobs.json", "--scheduler", sched], 3600)
        mean = re.search(r"completion time\s+mean ([0-9.]+) h", out)
        runs = re.search(r"(\d+) scheduler events, (\d+) engine runs", out)
        m.update(mean_completion_h=float(mean.group(1)) if mean else 0.0, engine_runs=int(runs.group(2)) if runs else 0)
        res["cluster"][sched] = m
        print(f"{'cluster 4096 ' + sched:<28} {m['engine_runs']:>10,} {m['wall_s']:>9.2f} {m['cpu_s']:>9.2f} "
              f"{m['rss_bytes'] / GIB:>8.3f} {'':>11} {'':>11}  mean completion {m['mean_completion_h']:.2f} h; "
              f"<= 60 s: {verdict(m['wall_s'] <= 60)}", flush=True)


CASES = {"gpt3": case_gpt3, "llama405": case_llama405, "scaling": case_scaling, "flow": case_flow,
         "search": case_search, "search-cli": case_search_cli, "frontier": case_frontier,
         "frontier-flow": case_frontier_flow,
         "deepseek": case_deepseek, "cluster": case_cluster, "million": case_million}


def machine():
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    mem = 0
    try:
        with open("/proc/meminfo") as f:
            mem = int(next(l.split()[1] for l in f if l.startswith("MemTotal"))) / 1024 ** 2
    except (OSError, StopIteration):
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gib": round(mem, 1), "kernel": platform.release(),
            "load_average_start": os.getloadavg()}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True, help="build directory holding hcsim and bench/")
    ap.add_argument("--only", action="append", choices=sorted(CASES), help="run only these cases (repeatable)")
    ap.add_argument("--skip", action="append", default=[], choices=sorted(CASES), help="skip these cases")
    ap.add_argument("--json", help="write the measurements to this file")
    a = ap.parse_args()
    names = [n for n in (a.only or list(CASES)) if n not in a.skip]
    res = {"machine": machine()}
    mc = res["machine"]
    print(f"machine: {mc['cores']} cores ({mc['cpu']}), {mc['memory_gib']} GiB; load average at start "
          f"{mc['load_average_start'][0]:.1f} (a loaded, shared machine makes wall time exceed CPU time)")
    print(HEADER, flush=True)
    for n in names:
        CASES[n](a.build, res)
    res["machine"]["load_average_end"] = os.getloadavg()
    print(f"load average at end {res['machine']['load_average_end'][0]:.1f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
