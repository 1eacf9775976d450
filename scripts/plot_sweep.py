#!/usr/bin/python3
"""A metric of a sweep against one of its axes, one line per value of the other axes.

Usage: /usr/bin/python3 scripts/plot_sweep.py RESULTS.jsonl OUT.png [METRIC [PARAM]]

RESULTS.jsonl is DIR/results.jsonl of `hcsim sweep --out DIR`. METRIC is a metric column of
the records (default step_time_s, else the first), PARAM a swept parameter: its JSON
pointer or its last segment, e.g. /strategy/tp or tp (default: the first numeric parameter
that takes several values). Every other parameter that takes several values splits the
points into lines ("pp=2, schedule=1f1b"); points that are not "ok" (infeasible, error)
are left out and counted in the title. A numeric axis spanning 16x or more is drawn in
log2 scale. Prints the number of lines drawn. Needs matplotlib (Debian:
python3-matplotlib); exit status 3 without it, 2 on bad input.
"""
import json
import sys


def fail(message):
    sys.stderr.write("plot_sweep.py: " + message + "\n")
    sys.exit(2)


def short(pointer):
    return pointer.rstrip("/").split("/")[-1]


def numeric(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def read_records(path):
    try:
        with open(path, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError) as e:
        fail("cannot read %s: %s" % (path, e))


def sweep_lines(records, metric=None, param=None):
    """(metric, param, lines, left_out): lines = [(label, [(x, y)])] sorted by label.

    The points of each line are sorted by x (numeric axes) or kept in sweep order."""
    ok = [r for r in records if r.get("status") == "ok" and isinstance(r.get("metrics"), dict)]
    if not ok:
        fail("no point with status ok")
    params = []
    for r in ok:
        for k in r.get("params", {}):
            if k not in params:
                params.append(k)
    varying = [p for p in params if len({json.dumps(r["params"].get(p)) for r in ok}) > 1]
    metrics = list(ok[0]["metrics"])
    metric = metric or ("step_time_s" if "step_time_s" in metrics else metrics[0])
    if metric not in metrics:
        fail("no metric %s; the records have %s" % (metric, ", ".join(metrics)))
    if param is None:
        numbers = [p for p in varying if all(numeric(r["params"].get(p)) for r in ok)]
        param = (numbers or varying or params or [None])[0]
        if param is None:
            fail("the records have no parameters")
    else:
        match = [p for p in params if p == param or short(p) == param]
        if not match:
            fail("no parameter %s; the records have %s" % (param, ", ".join(params)))
        param = match[0]
    others = [p for p in varying if p != param]
    lines = {}
    for r in ok:
        label = ", ".join("%s=%s" % (short(p), json.dumps(r["params"].get(p)).strip('"')) for p in others)
        y = r["metrics"].get(metric)
        if numeric(y):
            lines.setdefault(label, []).append((r["params"].get(param), y))
    for pts in lines.values():
        if all(numeric(x) for x, _ in pts):
            pts.sort(key=lambda p: p[0])
    return metric, param, sorted(lines.items()), len(records) - len(ok)


def main(argv):
    if len(argv) not in (3, 4, 5):
        fail("usage: plot_sweep.py RESULTS.jsonl OUT.png [METRIC [PARAM]]")
    records = read_records(argv[1])
    metric, param, lines, left_out = sweep_lines(records, argv[3] if len(argv) > 3 else None,
                                                 argv[4] if len(argv) > 4 else None)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.stderr.write("plot_sweep.py: matplotlib is not installed\n")
        return 3
    fig, ax = plt.subplots(figsize=(9, 5), dpi=100)
    xs_all = [x for _, pts in lines for x, _ in pts]
    is_numeric = all(numeric(x) for x in xs_all)
    categories = []
    if not is_numeric:
        for x in xs_all:
            if json.dumps(x) not in categories:
                categories.append(json.dumps(x))
    for label, pts in lines:
        xs = [x if is_numeric else categories.index(json.dumps(x)) for x, _ in pts]
        ax.plot(xs, [y for _, y in pts], marker="o", label=label or metric)
    if is_numeric and xs_all and min(xs_all) > 0 and max(xs_all) / min(xs_all) >= 16:
        ax.set_xscale("log", base=2)
    if not is_numeric:
        ax.set_xticks(range(len(categories)))
        ax.set_xticklabels([c.strip('"') for c in categories])
    ax.set_xlabel(param)
    ax.set_ylabel(metric)
    title = "%s against %s" % (metric, short(param))
    if left_out:
        title += " (not ok, left out: %d)" % left_out
    ax.set_title(title)
    if len(lines) > 1 or lines[0][0]:
        ax.legend(fontsize=8, loc="best", ncol=1 if len(lines) <= 8 else 2)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(argv[2])
    plt.close(fig)
    print("lines: %d" % len(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
