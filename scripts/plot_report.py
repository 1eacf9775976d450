#!/usr/bin/python3
"""Plots of one hcsim run: where the time, the memory and the power went.

Usage: /usr/bin/python3 scripts/plot_report.py REPORT.json TRACE.json OUTDIR

REPORT.json is `hcsim run --format json` (or report.json of --out DIR), TRACE.json the
file of `hcsim run --trace`. Writes into OUTDIR:
  timeline.png  Gantt chart: one row per device and stream, a bar per task, coloured by kind;
                past MAX_TIMELINE_DEVICES devices one row per pipeline stage and stream, each
                interval drawn in the kind that kept the stage busiest, shaded by the share
                of its devices busy; in analytical mode a note that there is no timeline
  memory.png    memory per device of each pipeline stage, stacked by component, against capacity
  power.png     IT power of the cluster over the step, and the power of each simulated device;
                past MAX_POWER_DEVICES devices the mean of each stage's devices with their
                min-max band
Prints how many timeline rows and power series it drew. Needs matplotlib (Debian:
python3-matplotlib). Exit status 2 on bad input.
"""

import bisect
import json
import os
import sys

plt = None  # matplotlib.pyplot, imported once the inputs are known to be good

GIB = 1024.0 ** 3
MAX_TIMELINE_DEVICES = 16  # past this many devices with a timeline, one row per stage
MAX_POWER_DEVICES = 4      # past this many, the power panel shows each stage's mean and band
TIMELINE_BINS = 400
COLOURS = {
    "forward": "#4C72B0",
    "backward": "#DD8452",
    "recompute": "#8172B3",
    "optimizer": "#937860",
    "tp": "#55A868",
    "sp": "#64B5CD",
    "pp": "#C44E52",
    "dp": "#DA8BC3",
    "zero": "#CCB974",
    "offload": "#8C8C8C",
    "cp": "#2F4F4F",
}
MEMORY_PARTS = [
    ("weights_bytes", "weights"),
    ("gradients_bytes", "gradients"),
    ("optimizer_bytes", "optimizer"),
    ("activations_bytes", "activations"),
    ("buffers_bytes", "buffers"),
]


def fail(message):
    sys.stderr.write("plot_report.py: " + message + "\n")
    sys.exit(2)


def load(path, what):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail("cannot read %s %s: %s" % (what, path, e))


def slice_colour(event):
    if event.get("cat") == "compute":
        return COLOURS.get(event["args"].get("phase", ""), "#999999")
    return COLOURS.get(event["args"].get("kind", ""), "#999999")


def device_stages(report):
    """device -> (stage, pool) from the report's per-device list."""
    return {d["device"]: (d["stage"], d["pool"]) for d in report.get("per_device", [])}


def thread_names(trace):
    names = {}
    for e in trace["traceEvents"]:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
    return names


def stream_of(name):
    """The stream of a thread named "compute", "comm", "comm 2", ...: its first word."""
    return name.split(" ")[0]


def timeline_rows(trace, report, max_devices=MAX_TIMELINE_DEVICES, bins=TIMELINE_BINS):
    """The timeline's rows: (per_stage, [(label, [(start_ms, width_ms, colour, alpha)])]).

    Up to max_devices devices, a row per device and thread with a bar per slice. Beyond,
    a row per (stage, stream): the step cut into `bins` intervals, each drawn in the colour
    that kept the stage's devices busiest in it, at the share of their time busy."""
    names, threads = {}, thread_names(trace)
    slices = []
    for e in trace["traceEvents"]:
        if e.get("ph") == "M" and e.get("name") == "process_name":
            names[e["pid"]] = e["args"]["name"]
        elif e.get("ph") == "X":
            slices.append(e)
    pids = sorted({e["pid"] for e in slices})
    if len(pids) <= max_devices:
        tracks = {}
        for e in slices:
            tracks.setdefault((e["pid"], e["tid"]), []).append((e["ts"] / 1e3, e["dur"] / 1e3, slice_colour(e), 1.0))
        rows = []
        for pid, tid in sorted(tracks):
            label = "%s · %s" % (names.get(pid, "device %d" % pid), threads.get((pid, tid), "thread %d" % tid))
            rows.append((label, tracks[(pid, tid)]))
        return False, rows
    stage_of = device_stages(report)
    step_ms = report["step_time_s"] * 1e3
    width = step_ms / bins
    devices, busy = {}, {}
    for pid in pids:
        stage = stage_of.get(pid, (0, ""))[0]
        devices[stage] = devices.get(stage, 0) + 1
    for e in slices:
        key = (stage_of.get(e["pid"], (0, ""))[0], stream_of(threads.get((e["pid"], e["tid"]), "compute")))
        cells = busy.setdefault(key, [dict() for _ in range(bins)])
        a, b = e["ts"] / 1e3, (e["ts"] + e["dur"]) / 1e3
        colour = slice_colour(e)
        k = max(0, min(bins - 1, int(a / width)))
        while k < bins and k * width < b:
            overlap = min(b, (k + 1) * width) - max(a, k * width)
            if overlap > 0:
                cells[k][colour] = cells[k].get(colour, 0.0) + overlap
            k += 1
    rows = []
    for stage, stream in sorted(busy, key=lambda k: (k[0], k[1] != "compute", k[1])):
        spans = []
        for k, cell in enumerate(busy[(stage, stream)]):
            total = sum(cell.values())
            if total <= 0:
                continue
            colour = max(sorted(cell), key=lambda c: cell[c])
            spans.append((k * width, width, colour, max(0.1, min(1.0, total / (width * devices[stage])))))
        rows.append(("stage %d (%d devices) · %s" % (stage, devices[stage], stream), spans))
    return True, rows


def plot_timeline(trace, report, out):
    analytical = report.get("mode") == "analytical"
    per_stage, rows = (False, []) if analytical else timeline_rows(trace, report)
    fig, ax = plt.subplots(figsize=(14, max(3.0, 0.45 * len(rows) + 1.5)), dpi=100)
    used = set()
    for i, (_, spans) in enumerate(rows):
        by_look = {}
        for start, width, colour, alpha in spans:
            by_look.setdefault((colour, round(alpha, 1)), []).append((start, width))
            used.add(colour)
        for (colour, alpha), bars in sorted(by_look.items()):
            ax.broken_barh(bars, (i - 0.4, 0.8), facecolors=colour, alpha=alpha, linewidth=0)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([label for label, _ in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, report["step_time_s"] * 1e3)
    ax.set_xlabel("time (ms)")
    title = "%s: one training step, %.4g s" % (report.get("scenario", ""), report["step_time_s"])
    if per_stage:
        title += " (one row per stage and stream; shade = share of the stage's devices busy)"
    ax.set_title(title)
    if not rows:
        why = "analytical mode: no timeline; run with fidelity event" if analytical else "no tasks in the trace"
        ax.text(0.5, 0.5, why, transform=ax.transAxes, ha="center", va="center", fontsize=14, color="#555555")
        print("timeline note: " + why)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for k, c in COLOURS.items() if c in used]
    if handles:
        ax.legend(handles, [k for k, c in COLOURS.items() if c in used], loc="upper left",
                  bbox_to_anchor=(1.005, 1.0), fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "timeline.png"))
    plt.close(fig)
    return len(rows), per_stage


def plot_memory(report, out):
    stages = report["stages"]
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * len(stages) + 3), 5), dpi=100)
    x = list(range(len(stages)))
    bottom = [0.0] * len(stages)
    for key, label in MEMORY_PARTS:
        values = [s["memory"][key] / GIB for s in stages]
        ax.bar(x, values, bottom=bottom, label=label, width=0.6)
        bottom = [b + v for b, v in zip(bottom, values)]
    caps = [s["memory"]["capacity_bytes"] / GIB for s in stages]
    ax.hlines(caps, [i - 0.4 for i in x], [i + 0.4 for i in x], colors="black", linewidth=2, label="capacity")
    ax.set_xticks(x)
    ax.set_xticklabels(["stage %d\n%s" % (s["stage"], s["pool"]) for s in stages], fontsize=8)
    ax.set_ylabel("memory per device (GiB)")
    ax.set_title("memory per device by pipeline stage")
    ax.set_ylim(0, max(caps + bottom) * 1.1 if stages else 1)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(os.path.join(out, "memory.png"))
    plt.close(fig)


def device_power(trace):
    series = {}
    for e in trace["traceEvents"]:
        if e.get("ph") == "C" and e.get("name") == "power (W)":
            series.setdefault(e["pid"], []).append((e["ts"] / 1e3, e["args"]["W"]))
    return series


def power_at(ts, ws, t):
    """A device's power (a step function of its counter samples at times ts) at time t."""
    k = bisect.bisect_right(ts, t) - 1
    return ws[max(0, k)] if ws else 0.0


def power_groups(trace, report, max_devices=MAX_POWER_DEVICES, samples=200):
    """The power panel's series: [(label, times_ms, mean_w, min_w, max_w)].

    Up to max_devices devices, one series per device (min = max = mean); beyond, one per
    pipeline stage and pool: the mean of its devices on a grid of `samples` times, with the
    minimum and maximum of its devices."""
    series = device_power(trace)
    if len(series) <= max_devices:
        out = []
        for pid, points in sorted(series.items()):
            ts, ws = [t for t, _ in points], [w for _, w in points]
            out.append(("device %d" % pid, ts, ws, ws, ws))
        return out
    stage_of = device_stages(report)
    groups = {}
    for pid, points in series.items():
        groups.setdefault(stage_of.get(pid, (0, "")), []).append(([t for t, _ in points], [w for _, w in points]))
    step_ms = report["step_time_s"] * 1e3
    grid = [step_ms * i / samples for i in range(samples)]
    out = []
    for (stage, pool), members in sorted(groups.items()):
        values = [[power_at(ts, ws, t) for ts, ws in members] for t in grid]
        out.append(("stage %d · %s (%d devices)" % (stage, pool, len(members)), grid,
                    [sum(v) / len(v) for v in values], [min(v) for v in values], [max(v) for v in values]))
    return out


def plot_power(report, trace, out):
    step_ms = report["step_time_s"] * 1e3
    power = report["power"]
    width = power["interval_s"] * 1e3
    samples = power["it_w"]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(12, 7), dpi=100, sharex=True)
    xs = [i * width for i in range(len(samples))] + [step_ms]
    top.stairs([p / 1e3 for p in samples], xs, fill=True, alpha=0.5, label="IT power")
    pue = report["energy"]["pue"]
    if pue > 1:
        top.stairs([p * pue / 1e3 for p in samples], xs, label="facility (PUE %.2f)" % pue)
    top.axhline(report["energy"]["average_power_w"] / 1e3, color="black", linestyle="--", linewidth=1,
                label="average %.4g kW" % (report["energy"]["average_power_w"] / 1e3))
    top.set_ylabel("cluster power (kW)")
    top.set_title("power over one step: %.4g kJ IT, %.4g J/token" %
                  (report["energy"]["it_j"] / 1e3, report["energy"]["per_token_j"]))
    top.legend(fontsize=8, loc="lower right")
    groups = power_groups(trace, report)
    aggregated = len(groups) < len(device_power(trace))
    for label, ts, mean, lo, hi in groups:
        edges = ts + [step_ms]
        line = bottom.stairs(mean, edges, label=label + (" mean" if aggregated else ""))
        if aggregated:
            bottom.stairs(hi, edges, baseline=lo, fill=True, alpha=0.2, color=line.get_edgecolor())
    bottom.set_ylabel("device power (W)" + (": mean and min-max band per stage" if aggregated else ""))
    bottom.set_xlabel("time (ms)")
    bottom.set_xlim(0, step_ms)
    if groups and len(groups) <= 12:
        bottom.legend(fontsize=7, loc="lower right", ncol=4)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "power.png"))
    plt.close(fig)
    return len(groups), aggregated


def main(argv):
    if len(argv) != 4:
        fail("usage: plot_report.py REPORT.json TRACE.json OUTDIR")
    report = load(argv[1], "report")
    trace = load(argv[2], "trace")
    if not str(report.get("format", "")).startswith("hcsim-report/"):
        fail("%s is not an hcsim report (no \"format\": \"hcsim-report/...\")" % argv[1])
    if "traceEvents" not in trace:
        fail("%s is not a trace (no \"traceEvents\")" % argv[2])
    global plt
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot

    plt = matplotlib.pyplot
    os.makedirs(argv[3], exist_ok=True)
    rows, per_stage = plot_timeline(trace, report, argv[3])
    plot_memory(report, argv[3])
    series, aggregated = plot_power(report, trace, argv[3])
    print("timeline rows: %d (%s)" % (rows, "per stage" if per_stage else "per device"))
    print("power series: %d (%s)" % (series, "per stage" if aggregated else "per device"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
