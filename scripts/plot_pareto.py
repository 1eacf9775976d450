#!/usr/bin/python3
"""Plots the Pareto front written by `hcsim search --out DIR` (DIR/pareto_points.csv).

Usage: plot_pareto.py POINTS.csv OUT.png

POINTS.csv has the columns devices, step_time_s, energy_per_token_j, on_front (0/1),
confirmed (0/1: simulated at the confirmation fidelity, or only screened) and label.
Every feasible layout is drawn as step time against energy per token, coloured by device
count: the confirmed ones solid, the screened ones light and small. The layouts on the
front (step time, energy, devices) are circled, joined and numbered in order of step
time; the numbers are explained in a legend beside the axes, so no label overprints
another. Exit status 3 when matplotlib is
missing (Debian: python3-matplotlib), 2 on bad arguments or input.
"""
import csv
import sys


def read_points(path):
    """(confirmed, screened, front): lists of row dicts; front sorted by step time."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        r["t"] = float(r["step_time_s"])
        r["e"] = float(r["energy_per_token_j"])
        r["d"] = int(r["devices"])
        r["is_confirmed"] = r.get("confirmed", "1") != "0"  # files without the column: all confirmed
    confirmed = [r for r in rows if r["is_confirmed"]]
    screened = [r for r in rows if not r["is_confirmed"]]
    front = sorted((r for r in confirmed if r["on_front"] == "1"), key=lambda r: (r["t"], r["e"]))
    return confirmed, screened, front


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
    try:
        confirmed, screened, front = read_points(argv[1])
    except (OSError, KeyError, ValueError) as e:
        print("plot_pareto.py: cannot read %s: %s" % (argv[1], e), file=sys.stderr)
        return 2
    if not confirmed and not screened:
        print("plot_pareto.py: no points in " + argv[1], file=sys.stderr)
        return 2
    devices = [r["d"] for r in confirmed + screened]
    norm = matplotlib.colors.Normalize(vmin=min(devices), vmax=max(devices))

    fig, ax = plt.subplots(figsize=(10, 5), dpi=120)
    if screened:
        ax.scatter([r["t"] for r in screened], [r["e"] for r in screened], c=[r["d"] for r in screened],
                   cmap="viridis", norm=norm, s=10, alpha=0.25, linewidths=0,
                   label="screened only (%d)" % len(screened))
    sc = ax.scatter([r["t"] for r in confirmed], [r["e"] for r in confirmed], c=[r["d"] for r in confirmed],
                    cmap="viridis", norm=norm, s=28, alpha=0.9, label="confirmed (%d)" % len(confirmed))
    fig.colorbar(sc, ax=ax, label="devices", pad=0.01)
    ax.plot([r["t"] for r in front], [r["e"] for r in front], color="tab:red", linewidth=1, zorder=1)
    ax.scatter([r["t"] for r in front], [r["e"] for r in front], s=90, facecolors="none",
               edgecolors="tab:red", label="Pareto front (time, energy, devices)")
    # Numbers beside the front's points, alternating above and below the line so that
    # neighbours do not meet; the labels themselves go in the numbered legend.
    for k, r in enumerate(front):
        dy = 7 if k % 2 == 0 else -12
        ax.annotate(str(k + 1), (r["t"], r["e"]), xytext=(5, dy), textcoords="offset points", fontsize=7,
                    color="tab:red")
    key = "Pareto front\n" + "\n".join("%d  %s" % (k + 1, r["label"]) for k, r in enumerate(front[:30]))
    if len(front) > 30:
        key += "\n... %d more" % (len(front) - 30)
    if front:
        fig.text(0.70, 0.93, key, fontsize=6.5, va="top", ha="left", family="monospace")
    ax.set_xlabel("step time (s)")
    ax.set_ylabel("energy per token (J)")
    ax.set_title("hcsim search: feasible layouts")
    ax.legend(loc="best", fontsize=8)
    fig.tight_layout(rect=(0, 0, 0.69, 1))
    fig.savefig(argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
