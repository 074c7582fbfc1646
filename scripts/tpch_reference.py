#!/usr/bin/env python3
"""The independent TPC-H reference: DuckDB (the Python package) on Parquet files on local disk.

Tables are views over DuckDB's built-in Parquet reader (`DIR/<table>/*.parquet`); no
extension is loaded or downloaded.

    tpch_reference.py --data DIR --serve
        reads one JSON object a line on stdin, {"sql": "..."}, runs it and writes one JSON
        line: {"seconds": wall time of execute + fetchall, "columns": [...], "rows": [[...]]}
        or {"error": "..."}. `tusk bench tpch` drives DuckDB this way, so that the very
        query text embedded in the binary is what DuckDB runs.
    tpch_reference.py --data DIR --query FILE
        runs one query file and prints the same JSON object.

Numbers come out as JSON numbers (decimals as floats), dates as YYYY-MM-DD, text as is.
"""
import argparse
import datetime
import decimal
import json
import sys
import time

import duckdb

TABLES = ["region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem"]


def connect(data):
    con = duckdb.connect(config={"autoinstall_known_extensions": False,
                                 "autoload_known_extensions": False})
    for table in TABLES:
        path = f"{data.rstrip('/')}/{table}/*.parquet".replace("'", "''")
        con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{path}')")
    return con


def cell(value):
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    return value


def run(con, sql):
    try:
        start = time.perf_counter()
        cursor = con.execute(sql)
        rows = cursor.fetchall()
        seconds = time.perf_counter() - start
        columns = [d[0] for d in cursor.description]
    except duckdb.Error as e:
        return {"error": str(e)}
    return {"seconds": seconds, "columns": columns,
            "rows": [[cell(v) for v in row] for row in rows]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="the TPC-H Parquet directory")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--serve", action="store_true")
    mode.add_argument("--query", help="one SQL file")
    args = parser.parse_args()
    con = connect(args.data)
    if args.query:
        with open(args.query) as f:
            print(json.dumps(run(con, f.read())))
        return
    for line in sys.stdin:
        if line.strip():
            print(json.dumps(run(con, json.loads(line)["sql"])), flush=True)


if __name__ == "__main__":
    main()
