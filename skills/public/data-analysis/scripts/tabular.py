#!/usr/bin/env python3
"""Profile and aggregate CSV, TSV, JSON and JSON Lines files with the standard library only.

  python3 tabular.py profile FILE [--csv OUT.csv]
  python3 tabular.py group FILE --by COL [--by COL ...] [--sum COL ...] [--mean COL ...]
                           [--min COL ...] [--max COL ...] [--top N] [--csv OUT.csv]

Both print a Markdown table; --csv also writes the full table as CSV.
"""

import argparse
import csv
import io
import json
import math
import re
import statistics
import sys
from collections import Counter, defaultdict

MISSING = {"", "na", "n/a", "nan", "null", "none", "-"}
THOUSANDS = re.compile(r"^[-+]?\d{1,3}(,\d{3})+(\.\d+)?$")
NUMERIC_SHARE = 0.95  # a column is numeric when this share of its non-missing values parse


def to_number(value):
    """A float for '1,234.5', '-3', '7.1e3', '12%' or '$5'; None otherwise."""
    text = value.strip().lstrip("$€£").rstrip("%").strip()
    if THOUSANDS.match(text):
        text = text.replace(",", "")
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def cell(value):
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def load_rows(path):
    """(column names, list of dict rows of strings) for CSV/TSV, a JSON array or object, or JSON Lines."""
    with open(path, "rb") as handle:
        raw = handle.read()
    text = raw.decode("utf-8-sig", errors="replace")
    stripped = text.lstrip()
    if path.lower().endswith((".json", ".jsonl", ".ndjson")) or stripped[:1] in "[{":
        records = parse_json_records(stripped)
        if records is not None:
            columns = []
            for record in records:
                for key in record:
                    if key not in columns:
                        columns.append(key)
            return columns, [{c: cell(r.get(c)) for c in columns} for r in records]
    sample = text[:65536]
    try:
        dialect = csv.Sniffer().sniff(sample, delimiters=",\t;|")
    except csv.Error:
        dialect = csv.excel_tab if path.lower().endswith(".tsv") else csv.excel
    reader = csv.reader(io.StringIO(text), dialect)
    header = next(reader, [])
    columns = [name.strip() or f"column_{i + 1}" for i, name in enumerate(header)]
    rows = []
    for values in reader:
        if not any(v.strip() for v in values):
            continue
        rows.append({c: (values[i] if i < len(values) else "") for i, c in enumerate(columns)})
    return columns, rows


def parse_json_records(text):
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        try:
            data = [json.loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError:
            return None
    if isinstance(data, dict):
        # {"items": [...]} — take the largest list of objects inside; else the object is one record.
        lists = [v for v in data.values() if isinstance(v, list) and v and all(isinstance(x, dict) for x in v)]
        data = max(lists, key=len) if lists else [data]
    if not isinstance(data, list):
        return None
    return [r if isinstance(r, dict) else {"value": r} for r in data]


def fmt(number):
    if number is None:
        return ""
    if number == int(number) and abs(number) < 1e15:
        return str(int(number))
    return f"{number:.4g}" if abs(number) >= 1e6 or abs(number) < 1e-3 else f"{number:.4f}".rstrip("0").rstrip(".")


def profile(columns, rows):
    header = ["column", "type", "non_missing", "missing", "distinct", "min", "max", "mean", "median", "stdev", "top_values"]
    table = []
    for column in columns:
        values = [r[column].strip() for r in rows]
        present = [v for v in values if v.lower() not in MISSING]
        numbers = [n for n in (to_number(v) for v in present) if n is not None]
        is_numeric = bool(present) and len(numbers) >= NUMERIC_SHARE * len(present)
        counts = Counter(present)
        top = ", ".join(f"{v[:30]} ({n})" for v, n in counts.most_common(3))
        stats = ["", "", "", "", ""]
        if is_numeric:
            stats = [
                fmt(min(numbers)),
                fmt(max(numbers)),
                fmt(statistics.fmean(numbers)),
                fmt(statistics.median(numbers)),
                fmt(statistics.stdev(numbers)) if len(numbers) > 1 else "",
            ]
        kind = "numeric" if is_numeric else ("empty" if not present else "text")
        table.append([column, kind, len(present), len(values) - len(present), len(counts), *stats, top])
    return header, table


def group(rows, by, aggregates, top):
    buckets = defaultdict(list)
    for row in rows:
        buckets[tuple(row.get(c, "").strip() for c in by)].append(row)
    header = [*by, "count"] + [f"{op}_{col}" for op, col in aggregates]
    table = []
    for key, members in buckets.items():
        line = [*key, len(members)]
        for op, col in aggregates:
            numbers = [n for n in (to_number(m.get(col, "")) for m in members) if n is not None]
            if not numbers:
                line.append("")
            elif op == "sum":
                line.append(fmt(math.fsum(numbers)))
            elif op == "mean":
                line.append(fmt(statistics.fmean(numbers)))
            elif op == "min":
                line.append(fmt(min(numbers)))
            else:
                line.append(fmt(max(numbers)))
        table.append(line)
    sort_index = len(by) + 1 if aggregates else len(by)  # first aggregate, else count
    table.sort(key=lambda line: to_number(str(line[sort_index])) or 0, reverse=True)
    return header, table[:top] if top else table


def print_markdown(header, table, limit=50):
    escape = lambda v: str(v).replace("|", "\\|").replace("\n", " ")
    print("| " + " | ".join(map(escape, header)) + " |")
    print("|" + "---|" * len(header))
    for line in table[:limit]:
        print("| " + " | ".join(map(escape, line)) + " |")
    if len(table) > limit:
        print(f"\n({len(table) - limit} more rows; see the CSV)")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("profile", help="one row of statistics per column")
    p.add_argument("file")
    p.add_argument("--csv")
    g = sub.add_parser("group", help="count and aggregate rows per group, largest first")
    g.add_argument("file")
    g.add_argument("--by", action="append", required=True)
    for op in ("sum", "mean", "min", "max"):
        g.add_argument(f"--{op}", action="append", default=[], metavar="COL")
    g.add_argument("--top", type=int, default=0, help="keep only the first N groups")
    g.add_argument("--csv")
    args = parser.parse_args()

    columns, rows = load_rows(args.file)
    if args.command == "profile":
        print(f"File: {args.file}\nRows: {len(rows)}\nColumns: {len(columns)}\n")
        header, table = profile(columns, rows)
    else:
        aggregates = [(op, col) for op in ("sum", "mean", "min", "max") for col in getattr(args, op)]
        unknown = [c for c in [*args.by, *(col for _, col in aggregates)] if c not in columns]
        if unknown:
            sys.exit(f"unknown column(s): {', '.join(unknown)}; columns are: {', '.join(columns)}")
        header, table = group(rows, args.by, aggregates, args.top)
    print_markdown(header, table)
    if args.csv:
        with open(args.csv, "w", newline="", encoding="utf-8") as out:
            writer = csv.writer(out)
            writer.writerow(header)
            writer.writerows(table)
        print(f"\nWrote {len(table)} rows to {args.csv}")


if __name__ == "__main__":
    main()
