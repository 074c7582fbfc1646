#!/usr/bin/env python3
"""Adaptive replication against the better fixed mode, per link class and size, from the
JSON of `tusk bench replication-links`: the median ratio, a one-sided exact Mann-Whitney
p that adaptive's trials are slower, and whether adaptive wrote its blocks the better
mode's way. Prints a Markdown table (bold: median ratio over 1.05).
With --parallel-vs-pipeline: parallel over pipeline instead, paired by trial (the bench
writes the modes in turn within a trial), with an exact two-sided sign test.

    python3 scripts/adaptive-vs-best.py replication-links.json
    python3 scripts/adaptive-vs-best.py --parallel-vs-pipeline replication-links.json
"""
import itertools
import math
import json
import sys


def u_statistic(a, b):
    return sum((x > y) + 0.5 * (x == y) for x in a for y in b)


def p_slower(a, b):
    """Exact permutation p of a U at least this large: `a` tends to be larger than `b`."""
    pooled = a + b
    observed = u_statistic(a, b)
    at_least = total = 0
    for chosen in itertools.combinations(range(len(pooled)), len(a)):
        rest = [pooled[i] for i in range(len(pooled)) if i not in chosen]
        total += 1
        at_least += u_statistic([pooled[i] for i in chosen], rest) >= observed - 1e-12
    return at_least / total


def main(path):
    report = json.load(open(path))
    classes = report["link_classes"]
    sizes = [a["stands_for_bytes"] for a in classes[0]["adaptive_vs_best"]]
    print("| link | " + " | ".join(f"{s >> 20} MB" for s in sizes) + " |")
    print("|---|" + "---|" * len(sizes))
    for c in classes:
        times = {(x["mode"], x["stands_for_bytes"]): x["write_seconds"] for x in c["latency"]}
        cells = []
        for a in c["adaptive_vs_best"]:
            size, best = a["stands_for_bytes"], a["best_fixed"]
            p = p_slower(times[("adaptive", size)], times[(best, size)])
            share = a["chose_best_fraction"]
            way = {1.0: "same mode", 0.0: "other mode"}.get(share, f"{share:.0%} same mode")
            cell = f"{a['ratio_median']:.2f} (p {p:.2f}, {way})"
            cells.append(f"**{cell}**" if a["ratio_median"] > 1.05 else cell)
        print(f"| {c['link_class']} | " + " | ".join(cells) + " |")


def sign_test(ratios):
    """Two-sided exact sign test of the paired ratios against 1."""
    below = sum(r < 1 for r in ratios)
    above = sum(r > 1 for r in ratios)
    n = below + above
    k = min(below, above)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


def parallel_vs_pipeline(path):
    report = json.load(open(path))
    print("| link | MB (stands for) | paired parallel / pipeline per trial | median | sign test p |")
    print("|---|---|---|---|---|")
    for c in report["link_classes"]:
        times = {(x["mode"], x["stands_for_bytes"]): x["write_seconds"] for x in c["latency"]}
        for size in sorted({s for (_, s) in times}):
            ratios = [a / b for a, b in zip(times[("parallel", size)], times[("pipeline", size)])]
            median = sorted(ratios)[len(ratios) // 2] if len(ratios) % 2 else (
                sum(sorted(ratios)[len(ratios) // 2 - 1 : len(ratios) // 2 + 1]) / 2
            )
            cells = ", ".join(f"{r:.2f}" for r in ratios)
            print(f"| {c['link_class']} | {size >> 20} | {cells} | {median:.2f} | {sign_test(ratios):.3f} |")


if __name__ == "__main__":
    if sys.argv[1] == "--parallel-vs-pipeline":
        parallel_vs_pipeline(sys.argv[2])
    else:
        main(sys.argv[1])
