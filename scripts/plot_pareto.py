#!/usr/bin/python3
"""Plots the Pareto front written by `hcsim search --out DIR` (DIR/pareto_points.csv).

Usage: plot_pareto.py POINTS.csv OUT.png

POINTS.csv has the columns devices, step_time_s, energy_per_token_j, on_front (0/1) and
label. Every confirmed feasible layout is drawn as step time against energy per token,
coloured by device count; the layouts on the front (step time, energy, devices) are
circled and joined. Exit status 3 when matplotlib is missing (Debian: python3-matplotlib),
2 on bad arguments or input.
"""
import csv
import sys


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_pareto.py: matplotlib is not installed", file=sys.stderr)
        return 3
    with open(argv[1], newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        print("plot_pareto.py: no points in " + argv[1], file=sys.stderr)
        return 2
    t = [float(r["step_time_s"]) for r in rows]
    e = [float(r["energy_per_token_j"]) for r in rows]
    d = [int(r["devices"]) for r in rows]
    front = sorted((i for i, r in enumerate(rows) if r["on_front"] == "1"), key=lambda i: t[i])

    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
    sc = ax.scatter(t, e, c=d, cmap="viridis", s=24, alpha=0.8)
    fig.colorbar(sc, ax=ax, label="devices")
    ax.plot([t[i] for i in front], [e[i] for i in front], color="tab:red", linewidth=1, zorder=1)
    ax.scatter([t[i] for i in front], [e[i] for i in front], s=80, facecolors="none",
               edgecolors="tab:red", label="Pareto front (time, energy, devices)")
    for i in front:
        ax.annotate(rows[i]["label"], (t[i], e[i]), fontsize=6, xytext=(4, 4), textcoords="offset points")
    ax.set_xlabel("step time (s)")
    ax.set_ylabel("energy per token (J)")
    ax.set_title("hcsim search: confirmed layouts")
    ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    fig.savefig(argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
