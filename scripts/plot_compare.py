#!/usr/bin/python3
"""Two runs side by side: their time breakdowns, memory and energy as paired bars.

Usage: /usr/bin/python3 scripts/plot_compare.py A.json B.json OUT.png

A.json and B.json are hcsim reports (`hcsim run --format json`, or report.json of --out
DIR); `hcsim diff A.json B.json` prints the same figures as a table. Three panels: the time
breakdown (mean over devices: compute, each exposed communication kind present in either
run, bubble, idle), memory per device (the device with the least headroom: each component,
and the capacity), and energy per step by component. Needs matplotlib (Debian:
python3-matplotlib); exit status 3 without it, 2 on bad input.
"""
import json
import os
import sys

GIB = 1024.0 ** 3
MEMORY = ["weights", "gradients", "optimizer", "activations", "buffers"]
ENERGY = ["device_dynamic", "device_static", "network_dynamic", "network_static", "host"]


def fail(message):
    sys.stderr.write("plot_compare.py: " + message + "\n")
    sys.exit(2)


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
    except (OSError, ValueError) as e:
        fail("cannot read %s: %s" % (path, e))
    if not str(report.get("format", "")).startswith("hcsim-report/"):
        fail("%s is not an hcsim report (no \"format\": \"hcsim-report/...\")" % path)
    return report


def breakdown(report, kinds):
    b = report["breakdown"]
    return [b["compute_s"]] + [b["exposed_comm_s"].get(k, 0.0) for k in kinds] + [b["bubble_s"], b["idle_s"]]


def panels(a, b):
    """[(title, unit, categories, values_a, values_b)]"""
    kinds = sorted({k for r in (a, b) for k, v in r["breakdown"]["exposed_comm_s"].items() if v})
    time_cats = ["compute"] + ["exposed " + k for k in kinds] + ["bubble", "idle"]
    def per_device(r):
        worst = [d for d in r.get("per_device", []) if d["device"] == r["memory"].get("worst_device")]
        return worst[0]["memory"] if worst else r["memory"]
    memory = lambda r: [per_device(r).get(k + "_bytes", 0.0) / GIB for k in MEMORY] + [r["memory"]["capacity_bytes"] / GIB]
    energy = lambda r: [r["energy"].get(k + "_j", 0.0) / 1e3 for k in ENERGY]
    return [
        ("time breakdown (mean over devices)", "ms", time_cats,
         [v * 1e3 for v in breakdown(a, kinds)], [v * 1e3 for v in breakdown(b, kinds)]),
        ("memory per device (least headroom)", "GiB", MEMORY + ["capacity"], memory(a), memory(b)),
        ("energy per step", "kJ", [k.replace("_", " ") for k in ENERGY], energy(a), energy(b)),
    ]


def main(argv):
    if len(argv) != 4:
        fail("usage: plot_compare.py A.json B.json OUT.png")
    a, b = load(argv[1]), load(argv[2])
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.stderr.write("plot_compare.py: matplotlib is not installed\n")
        return 3
    name_a = "A: %s (%s)" % (a.get("scenario", ""), os.path.basename(argv[1]))
    name_b = "B: %s (%s)" % (b.get("scenario", ""), os.path.basename(argv[2]))
    fig, axes = plt.subplots(1, 3, figsize=(15, 5), dpi=100)
    for ax, (title, unit, cats, va, vb) in zip(axes, panels(a, b)):
        y = list(range(len(cats)))
        ax.barh([i - 0.2 for i in y], va, height=0.4, label=name_a, color="#4C72B0")
        ax.barh([i + 0.2 for i in y], vb, height=0.4, label=name_b, color="#DD8452")
        for i, (x, z) in enumerate(zip(va, vb)):
            if x:
                ax.annotate("%+.1f %%" % (100.0 * (z - x) / abs(x)), (max(x, z), i), xytext=(4, -3),
                            textcoords="offset points", fontsize=7)
        ax.set_yticks(y)
        ax.set_yticklabels(cats, fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel(unit)
        ax.set_title(title, fontsize=10)
        ax.margins(x=0.2)
    axes[0].legend(fontsize=8, loc="lower right")
    fig.suptitle("%s vs %s: step %.4g s vs %.4g s" % (a.get("scenario", ""), b.get("scenario", ""),
                                                    a["step_time_s"], b["step_time_s"]))
    fig.tight_layout()
    fig.savefig(argv[3])
    plt.close(fig)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
