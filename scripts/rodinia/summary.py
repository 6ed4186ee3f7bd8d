#!/usr/bin/env python3
"""The summary of scripts/bench-rodinia: reads each run's totals from the
OpenCL interposer (runs/<name>.<r>.json), its wall time (.wall, in µs) and
its output (.out), and writes OUT/rodinia.json in futhark bench's layout
(program -> "datasets" -> dataset -> "runtimes", the kernel time of each
run in µs) with the other figures under "rodinia", then prints a table.
Where OUT/funmem-<name>.json is there (funmem bench on the same dataset),
its program and dataset names are used for ours, so that Futhark's
comparison scripts pair the two files, and its median is printed beside.

    summary.py OUT RUNS NAME...

Run 0 is the warm-up and is not counted. Standard library only.
"""

import json
import os
import re
import statistics
import sys

LABELS = {
    "hotspot": "1024x1024, 360 iterations",
    "pathfinder": "10^5 columns x 100 rows",
    "nw": "2048",
    "lud": "2048",
    "srad": "502x458, 100 iterations",
    "backprop": "2^20",
    "kmeans": "494019x34, k=5",
}
# Rodinia's own timing lines (ms), as its -DTIMING builds print them.
OWN = re.compile(r"^(Init|MemAlloc|HtoD|Exec|DtoH|Close|Total|iterated .*|.*[Tt]ime.*?)[:=]?\s*([-0-9.e+]+)?.*$")


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def funmem_side(out, name):
    """(program key, dataset key, median ms, raw) of funmem bench's JSON,
    when there is one with a dataset."""
    text = read(os.path.join(out, f"funmem-{name}.json"))
    if not text:
        return None
    try:
        j = json.loads(text)
        prog, body = next(iter(j.items()))
        ds, d = next(iter(body["datasets"].items()))
        rt = d.get("runtimes") or []
        return prog, ds, (statistics.median(rt) / 1000 if rt else None), d
    except (ValueError, StopIteration, AttributeError, KeyError, TypeError):
        return None


def main(argv):
    if len(argv) < 3:
        print("usage: summary.py OUT RUNS NAME...", file=sys.stderr)
        sys.exit(2)
    out, runs, names = argv[1], int(argv[2]), argv[3:]
    result = {}
    rows = []
    for name in names:
        per_run = []
        for r in range(1, runs + 1):
            t = read(os.path.join(out, "runs", f"{name}.{r}.json"))
            w = read(os.path.join(out, "runs", f"{name}.{r}.wall"))
            o = read(os.path.join(out, "runs", f"{name}.{r}.out")) or ""
            if t is None or w is None:
                break
            try:
                per_run.append((json.loads(t), int(w), o))
            except ValueError:
                break
        if len(per_run) < runs:
            rows.append((name, None))
            continue
        kernel_us = [round(t["kernel_ns"] / 1000) for t, _, _ in per_run]
        own = [
            line.strip()
            for line in per_run[len(per_run) // 2][2].splitlines()
            if OWN.match(line.strip()) and len(line) < 200
        ]
        iters = [m.group(1) for _, _, o in per_run for m in [re.search(r"iterated (\d+) times", o)] if m]
        first = per_run[0][0]
        figures = {
            "kernel_us": kernel_us,
            "wall_us": [w for _, w, _ in per_run],
            "transfer_us": [round(t["transfer_ns"] / 1000) for t, _, _ in per_run],
            "launches": first["launches"],
            "transfers": first["transfers"],
            "transfer_bytes": first["transfer_bytes"],
            "unprofiled": max(t["unprofiled"] for t, _, _ in per_run),
            "kernels": {k: v["launches"] for k, v in first["kernels"].items()},
            "own_timing": own,
        }
        if iters:
            figures["iterations"] = [int(i) for i in iters]
        fm = funmem_side(out, name)
        prog = fm[0] if fm else f"benches/programs/{name}.fun"
        ds = fm[1] if fm else LABELS[name]
        result[prog] = {"datasets": {ds: {"runtimes": kernel_us, "rodinia": figures}}}
        rows.append((name, (figures, fm)))
    with open(os.path.join(out, "rodinia.json"), "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")

    print()
    print(f"Rodinia (OpenCL) on our Table 4 datasets, median of {runs} runs; kernel time from")
    print("profiling events as funmem bench measures it; wall = the whole process.")
    head = f"{'benchmark':<11} {'dataset':<27} {'kernel ms':>10} {'transfer ms':>11} {'launches':>8} {'wall ms':>9} {'ours ms':>9} {'ref/ours':>8}"
    print(head)
    print("-" * len(head))
    for name, got in rows:
        if got is None:
            print(f"{name:<11} {LABELS[name]:<27} {'failed':>10}")
            continue
        fig, fm = got
        k = statistics.median(fig["kernel_us"]) / 1000
        tr = statistics.median(fig["transfer_us"]) / 1000
        wall = statistics.median(fig["wall_us"]) / 1000
        ours = fm[2] if fm and fm[2] else None
        ours_s = f"{ours:9.1f}" if ours else f"{'-':>9}"
        ratio = f"{k / ours:8.3f}" if ours else f"{'-':>8}"
        print(f"{name:<11} {LABELS[name]:<27} {k:10.2f} {tr:11.2f} {fig['launches']:8d} {wall:9.0f} {ours_s} {ratio}")
    for name, got in rows:
        if got and "iterations" in got[0]:
            fig, fm = got
            its = sorted(set(fig["iterations"]))
            k = statistics.median(fig["kernel_us"]) / 1000
            print(f"\nk-means: Rodinia iterated {', '.join(map(str, its))} times (each run), "
                  f"{k / its[-1]:.3f} kernel ms a round.")
            print("The times compare only where both made as many rounds (the last rounds move a")
            print("few points, so the centres' rounding, summed in other orders, can change the")
            print("count); otherwise compare the times a round.")
            rounds = read(os.path.join(out, "kmeans-rounds.txt"))
            if rounds:
                n = int(rounds.split()[0])
                same = "the same" if n in its else "NOT the same"
                print(f"Ours: {n} rounds ({same})", end="")
                if fm and fm[2]:
                    print(f", {fm[2] / n:.3f} kernel ms a round.")
                else:
                    print(".")
            else:
                print("Ours: not counted (needs --funmem; see logs/funmem-kmeans-run.txt).")
    for name, got in rows:
        if got and got[0]["unprofiled"]:
            print(f"note: {name}: {got[0]['unprofiled']} commands without profiling times (not counted)")
    print(f"\nJSON: {os.path.join(out, 'rodinia.json')}")


if __name__ == "__main__":
    main(sys.argv)
