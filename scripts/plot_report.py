#!/usr/bin/python3
"""Plots of one hcsim run: where the time, the memory and the power went.

Usage: /usr/bin/python3 scripts/plot_report.py REPORT.json TRACE.json OUTDIR

REPORT.json is `hcsim run --format json` (or report.json of --out DIR), TRACE.json the
file of `hcsim run --trace`. Writes into OUTDIR:
  timeline.png  Gantt chart: one row per device and stream, a bar per task, coloured by kind
  memory.png    memory per device of each pipeline stage, stacked by component, against capacity
  power.png     IT power of the cluster over the step, and the power of each simulated device
Needs matplotlib (Debian: python3-matplotlib). Exit status 2 on bad input.
"""

import json
import os
import sys

plt = None  # matplotlib.pyplot, imported once the inputs are known to be good

GIB = 1024.0 ** 3
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


def plot_timeline(trace, report, out):
    names, tracks = {}, {}
    for e in trace["traceEvents"]:
        if e.get("ph") == "M" and e.get("name") == "process_name":
            names[e["pid"]] = e["args"]["name"]
        elif e.get("ph") == "X":
            key = (e["pid"], e["tid"])
            tracks.setdefault(key, {}).setdefault(slice_colour(e), []).append((e["ts"] / 1e3, e["dur"] / 1e3))
    rows = sorted(tracks)
    fig, ax = plt.subplots(figsize=(14, max(3.0, 0.45 * len(rows) + 1.5)), dpi=100)
    for i, key in enumerate(rows):
        for colour, spans in sorted(tracks[key].items()):
            ax.broken_barh(spans, (i - 0.4, 0.8), facecolors=colour, linewidth=0)
    labels = []
    for pid, tid in rows:
        stream = "compute" if tid < 1000 else "comm"
        lane = tid % 1000
        labels.append("%s · %s%s" % (names.get(pid, "device %d" % pid), stream, " %d" % (lane + 1) if lane else ""))
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, report["step_time_s"] * 1e3)
    ax.set_xlabel("time (ms)")
    ax.set_title("%s: one training step, %.4g s" % (report.get("scenario", ""), report["step_time_s"]))
    used = sorted({c for t in tracks.values() for c in t})
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for k, c in COLOURS.items() if c in used]
    ax.legend(handles, [k for k, c in COLOURS.items() if c in used], loc="upper left", bbox_to_anchor=(1.005, 1.0),
              fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "timeline.png"))
    plt.close(fig)


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
    for pid, points in sorted(device_power(trace).items()):
        ts = [t for t, _ in points] + [step_ms]
        bottom.stairs([w for _, w in points], ts, label="device %d" % pid)
    bottom.set_ylabel("device power (W)")
    bottom.set_xlabel("time (ms)")
    bottom.set_xlim(0, step_ms)
    if len(device_power(trace)) <= 12:
        bottom.legend(fontsize=7, loc="lower right", ncol=4)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "power.png"))
    plt.close(fig)


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
    plot_timeline(trace, report, argv[3])
    plot_memory(report, argv[3])
    plot_power(report, trace, argv[3])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
