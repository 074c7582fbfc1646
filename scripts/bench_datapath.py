#!/usr/bin/env python3
"""Bulk data through Tusk's DataNodes and Hadoop 3.4.2's, in one run, with two clients.

Starts a Tusk local cluster (1 NameNode + 3 DataNodes) and Hadoop's standalone HDFS (the
anchor's standalone-hdfs.sh, 1 NameNode + 3 DataNodes in one JVM), then, trial by trial,
alternating which side goes first:
  - hdfs-native (the Rust client's Python package): single-file write (create -> close)
    and read (open -> last byte) at each size, replication 3;
  - Tusk's client: `tusk bench replication --fs URI` at the same sizes (pipeline on both
    sides, and parallel on Tusk, whose DataNodes speak it);
  - TestDFSIO: `tusk bench dfsio --fs URI`, N files at once, write then read.
Prints per cell the median and min over the trials and Hadoop's median / Tusk's median
(above 1: Tusk faster). Raw figures go to OUT/datapath.json, the tables to OUT/datapath.md.

  scripts/bench-datapath.sh [--trials 5] [--sizes 1,16,128,512] [--dfsio 4x128]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

MIB = 1 << 20


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw).stdout


def native_trial(uri, sizes, tag):
    """Write then read one file per size with hdfs-native; seconds per (op, size)."""
    from hdfs_native import Client, WriteOptions

    client = Client(uri)
    chunk = os.urandom(MIB)
    out = {}
    for size in sizes:
        path = f"/bench-datapath/native-{tag}-{size}m"
        start = time.perf_counter()
        with client.create(path, WriteOptions(replication=3, overwrite=True, create_parent=True)) as w:
            for _ in range(size):
                w.write(chunk)
        out[("write", size)] = time.perf_counter() - start
        start = time.perf_counter()
        got = 0
        with client.read(path) as r:
            while True:
                piece = r.read(4 * MIB)
                if not piece:
                    break
                got += len(piece)
        out[("read", size)] = time.perf_counter() - start
        if got != size * MIB:
            sys.exit(f"hdfs-native read {got} bytes of {path}, wrote {size * MIB}")
        client.delete(path)
    return out


def tusk_client_trial(tusk, uri, sizes, modes, json_path):
    run([tusk, "bench", "replication", "--fs", uri, "--trials", "1",
         "--sizes", ",".join(f"{s}m" for s in sizes), "--modes", ",".join(modes),
         "--json", json_path])
    out = {}
    for r in json.load(open(json_path))["results"]:
        size = r["size_bytes"] // MIB
        out[(r["mode"], "write", size)] = r["write_median_seconds"]
        out[(r["mode"], "read", size)] = r["read_median_seconds"]
    return out


def dfsio_trial(tusk, uri, files, size, mode, json_path):
    run([tusk, "bench", "dfsio", "--fs", uri, "--files", str(files), "--size", f"{size}m",
         "--mode", mode, "--json", json_path])
    (r,) = json.load(open(json_path))
    return {(mode, "write"): r["write"]["aggregate_mb_per_s"], (mode, "read"): r["read"]["aggregate_mb_per_s"]}


def cell(values, higher_is_better=False):
    med = statistics.median(values)
    best = max(values) if higher_is_better else min(values)
    return med, best


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(here)
    p = argparse.ArgumentParser()
    p.add_argument("--trials", type=int, default=5)
    p.add_argument("--sizes", default="1,16,128,512", help="MiB, comma-separated")
    p.add_argument("--dfsio", default="4x128", help="FILESxMIB")
    p.add_argument("--out", default=os.environ.get("OUT", "/tmp/tusk-datapath"))
    p.add_argument("--hadoop-port", type=int, default=18030)
    args = p.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    files, fsize = (int(x) for x in args.dfsio.split("x"))
    tusk = os.environ.get("TUSK") or os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.join(repo, "target")), "release", "tusk")
    anchor = os.environ.get("HADOOP_ANCHOR", os.path.join(os.path.dirname(repo), "shared", "anchors", "hadoop"))
    os.makedirs(args.out, exist_ok=True)
    tusk_dir = os.path.join(args.out, "tusk-cluster")
    env = dict(os.environ, HDFS_ANCHOR_DIR=os.path.join(args.out, "hadoop"))

    uris = {}
    try:
        uris["hadoop"] = run([os.path.join(anchor, "standalone-hdfs.sh"), "start",
                              str(args.hadoop_port), "3"], env=env).strip().splitlines()[-1]
        uris["tusk"] = run([tusk, "local", "up", "--dir", tusk_dir, "--format", "--datanodes", "3",
                            "--no-yarn", "-D", "dfs.permissions.enabled=false"]).strip().splitlines()[-1]
        print(f"Tusk {uris['tusk']}   Hadoop {uris['hadoop']}   {args.trials} trials", flush=True)
        raw = {side: [] for side in uris}
        for t in range(args.trials):
            order = ["tusk", "hadoop"] if t % 2 == 0 else ["hadoop", "tusk"]
            for side in order:
                modes = ["pipeline", "parallel"] if side == "tusk" else ["pipeline"]
                uri = uris[side]
                rec = {"native": native_trial(uri, sizes, f"{side}-{t}"),
                       "tusk_client": tusk_client_trial(tusk, uri, sizes, modes,
                                                        os.path.join(args.out, f"repl-{side}-{t}.json")),
                       "dfsio": {}}
                for mode in modes:
                    rec["dfsio"].update(dfsio_trial(tusk, uri, files, fsize, mode,
                                                    os.path.join(args.out, f"dfsio-{side}-{mode}-{t}.json")))
                raw[side].append(rec)
                print(f"trial {t + 1}/{args.trials} {side} done", flush=True)
    finally:
        subprocess.run([tusk, "local", "down", "--dir", tusk_dir], capture_output=True)
        subprocess.run([os.path.join(anchor, "standalone-hdfs.sh"), "stop"], env=env, capture_output=True)

    lines = [f"`scripts/bench-datapath.sh --trials {args.trials} --sizes {args.sizes} --dfsio {args.dfsio}`; "
             f"1 NameNode + 3 DataNodes each, replication 3, loopback; {args.trials} trials, sides alternating.", ""]
    lines += ["| client | mode | op | MiB | Tusk median (min) s | Hadoop median (min) s | Hadoop ÷ Tusk |",
              "|---|---|---|---|---|---|---|"]
    for op in ("write", "read"):
        for size in sizes:
            tm, tb = cell([r["native"][(op, size)] for r in raw["tusk"]])
            hm, hb = cell([r["native"][(op, size)] for r in raw["hadoop"]])
            lines.append(f"| hdfs-native | pipeline | {op} | {size} | {tm:.3f} ({tb:.3f}) | {hm:.3f} ({hb:.3f}) | ×{hm / tm:.2f} |")
    for mode in ("pipeline", "parallel"):
        for op in ("write", "read"):
            for size in sizes:
                tm, tb = cell([r["tusk_client"][(mode, op, size)] for r in raw["tusk"]])
                hm, hb = cell([r["tusk_client"][("pipeline", op, size)] for r in raw["hadoop"]])
                lines.append(f"| Tusk's | {mode} | {op} | {size} | {tm:.3f} ({tb:.3f}) | {hm:.3f} ({hb:.3f}) | ×{hm / tm:.2f} |")
    lines += ["", f"TestDFSIO, {files} × {fsize} MiB at once, aggregate MB/s (median, best):", "",
              "| mode | op | Tusk | Hadoop (pipeline) | Tusk ÷ Hadoop |", "|---|---|---|---|---|"]
    for mode in ("pipeline", "parallel"):
        for op in ("write", "read"):
            tm, tb = cell([r["dfsio"][(mode, op)] for r in raw["tusk"]], True)
            hm, hb = cell([r["dfsio"][("pipeline", op)] for r in raw["hadoop"]], True)
            lines.append(f"| {mode} | {op} | {tm:.0f} ({tb:.0f}) | {hm:.0f} ({hb:.0f}) | ×{tm / hm:.2f} |")
    text = "\n".join(lines)
    print(text)
    open(os.path.join(args.out, "datapath.md"), "w").write(text + "\n")
    json.dump({side: [{k: {"|".join(map(str, kk)): v for kk, v in rec[k].items()} for k in rec} for rec in recs]
               for side, recs in raw.items()}, open(os.path.join(args.out, "datapath.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
