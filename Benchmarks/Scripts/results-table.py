#!/usr/bin/env python3
"""The results table of Benchmarks/README.md, generated from a benchmark's JSON report.

    Benchmarks/Scripts/results-table.py [RESULTS.json]               print the Markdown table
    Benchmarks/Scripts/results-table.py [RESULTS.json] --check README  exit 1 if README's table differs
    Benchmarks/Scripts/results-table.py [RESULTS.json] --write README  regenerate README's table in place

RESULTS.json defaults to the newest file in Benchmarks/results/ (files are named by date,
YYYY-MM-DD.json, so the newest sorts last). It is either one run's report, as
`StrataBenchmarks --json-out FILE` writes it ({"date", "articles", "repetitions", "cores",
"scenarios": [...]}), or several runs ({..., "runs": [{"scenarios": [...]}, ...]}): one column
per run. Of each scenario the table reads `id`, `title`, `target`, `meetsTarget`, and what each
part of the target judges: its `judged` list (figure, value, limit, unit) where the report has
one, else — reports written before it — the target's text read against `unit`, `ratios`
(`strata/raw`, `strata/fasterGRDB`, `strata/reference`) and `medians` (`strata`). A scenario a
run lacks (added after it) shows as `—` in that run's column.
A top-level `source` says where figures not written by the executable came from.

The table in the README is the text between the lines `<!-- results:begin -->` and
`<!-- results:end -->`. Standard library only.
"""
import argparse
import json
import re
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent
RESULTS = BENCHMARKS / "results"
BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"


def newest_results():
    files = sorted(RESULTS.glob("*.json"))
    if not files:
        sys.exit(f"results-table.py: no JSON file in {RESULTS}")
    return files[-1]


def parts(scenario):
    """What each part of the target judges: (ratio key or None for Strata's median, limit)."""
    judged = []
    for part in scenario["target"].split(";"):
        match = re.search(r"≤\s*([0-9.]+)\s*(×|ms|MiB)?", part)
        if not match:
            sys.exit(f"results-table.py: cannot read the target {scenario['target']!r} of {scenario['id']}")
        limit = float(match.group(1))
        if match.group(2) != "×":
            judged.append((None, limit))
        elif "GRDB" in part:
            judged.append(("strata/fasterGRDB", limit))
        elif "strata/raw" in scenario.get("ratios", {}):
            judged.append(("strata/raw", limit))
        else:
            judged.append(("strata/reference", limit))
    return judged


def figure(value, limit, unit):
    """A value as the table shows it: two decimals, three where two would hide a miss; bold if missed."""
    text = f"{value:.2f}"
    if value > limit and float(text) <= limit:
        text = f"{value:.3f}"
    text += unit
    return f"**{text}**" if value > limit else text


def cell(scenario):
    if scenario is None:
        return "—"
    if "judged" in scenario:
        return "; ".join("—" if j.get("value") is None
                         else figure(j["value"], j["limit"], "×" if j["unit"] == "×" else " " + j["unit"])
                         for j in scenario["judged"])
    shown = []
    for key, limit in parts(scenario):
        value = scenario.get("medians", {}).get("strata") if key is None else scenario.get("ratios", {}).get(key)
        unit = "×" if key is not None else " " + scenario.get("unit", "ms")
        shown.append("—" if value is None else figure(value, limit, unit))
    return "; ".join(shown)


def table(report):
    runs = report.get("runs") or [report]
    by_id = [{s["id"]: s for s in run["scenarios"]} for run in runs]
    ids = []
    for run in runs:
        ids += [s["id"] for s in run["scenarios"] if s["id"] not in ids]
    first = {i: next(r[i] for r in by_id if i in r) for i in ids}

    facts = [str(report["date"])[:10], f"{report['articles']:,} articles",
             f"{report['repetitions']} repetitions per scenario"]
    if len(runs) > 1:
        facts.append(f"{len(runs)} runs back to back")
    if report.get("quick"):
        facts.append("quick mode")
    if "cores" in report:
        facts.append(f"{report['cores']} cores")
    if "sqliteVersion" in report:
        facts.append(f"SQLite {report['sqliteVersion']}")
    if "strataCommit" in report:
        facts.append(f"Strata at `{report['strataCommit']}`")
    lines = [", ".join(facts) + "."]
    if "source" in report:
        lines.append(f"Source: {report['source']}.")
    lines.append("")

    columns = [f"run {n}" for n in range(1, len(runs) + 1)] if len(runs) > 1 else ["result"]
    lines.append("| # | scenario | target | " + " | ".join(columns) + " |")
    lines.append("|---|---|---|" + "---|" * len(columns))
    for i in ids:
        scenario = first[i]
        lines.append(f"| {i} | {scenario['title']} | {scenario['target']} | "
                     + " | ".join(cell(r.get(i)) for r in by_id) + " |")
    met = []
    for r in by_id:
        count = sum(1 for s in r.values() if s.get("meetsTarget"))
        text = f"{count} of {len(r)}"
        met.append(f"**{text}**" if count == len(r) else text)
    lines.append("| | | **targets met** | " + " | ".join(met) + " |")
    return "\n".join(lines) + "\n"


def split_readme(text, path):
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        sys.exit(f"results-table.py: {path} needs one {BEGIN} line followed by one {END} line")
    head, rest = text.split(BEGIN + "\n", 1)
    body, tail = rest.split(END, 1)
    return head, body, tail


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="?", type=Path, help="a JSON report (default: the newest in Benchmarks/results/)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", metavar="README", type=Path, help="exit 1 if README's table is not the generated one")
    mode.add_argument("--write", metavar="README", type=Path, help="replace README's table with the generated one")
    arguments = parser.parse_args()

    path = arguments.results or newest_results()
    generated = table(json.loads(path.read_text(encoding="utf-8")))
    readme = arguments.check or arguments.write
    if readme is None:
        sys.stdout.write(generated)
        return
    text = readme.read_text(encoding="utf-8")
    head, body, tail = split_readme(text, readme)
    if arguments.write:
        readme.write_text(head + BEGIN + "\n" + generated + END + tail, encoding="utf-8")
        return
    if body != generated:
        sys.stderr.write(f"results-table.py: the table in {readme} is not the one {path.name} generates; "
                         f"run Benchmarks/Scripts/results-table.py --write {readme}\n")
        sys.exit(1)


if __name__ == "__main__":
    main()
