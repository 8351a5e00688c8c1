"""Execute every chapter that makes claims about trained results under several seeds.

Run by ``make claims`` (``python -m book_build.claims_run``, or ``scripts/check_claims.py``;
not part of ``make test``: it executes the training
chapters once per seed, eight times in all: about an hour on a 2-core machine
of the kind that builds the book, less where earlier runs left their models in
the cache).  Each chapter runs with ``ATTENTION_COURSE_SEED`` set
to each seed and ``ATTENTION_COURSE_CLAIMS_MODE=record``, so that a claim that
fails is recorded instead of stopping the chapter; then one table is printed:
every claim (``attention_course.chapter_tools.claims.claim``), its threshold, its value
under each seed and its smallest margin, and every measurement
(``claims.measure``: a quantity the prose says varies) with its values.  The
table is written to ``attention_course/chapter_tools/claims_by_seed.json`` once every chapter with claims has records under
seeds 0-7 (from this run or an earlier one: ``--chapters 8``
re-measures chapter 8 only).

A claim passes when it holds under every seed *and* its threshold leaves a
margin of at least a quarter of the claim's seed-to-seed spread (max - min
over the seeds) beyond the worst seed (:data:`MARGIN_SHARE`): a seed or a CPU
that was not tried is then unlikely to fail it.

    python scripts/check_claims.py                  # seeds 0-7, every chapter with claims
    python scripts/check_claims.py --seeds 3 4 --chapters 8 14
    python scripts/check_claims.py --pages 11_transformer_experiments
    python scripts/check_claims.py --table-only     # the table from the records already made
    python scripts/check_claims.py --graph-rewrites --chapters 14

``--graph-rewrites`` executes the chapters with TensorFlow's graph optimizer
on (``notebook.setup``): the same seeds with different round-off, as on
another CPU, to see which claims depend on it.  Its models and records are
kept apart, and it never rewrites the table.

Exit status 1 if a claim fails under any seed, or keeps less than its margin,
or a chapter fails to execute.
Trained models are cached by content (``_build/course_cache``), so a chapter
that the book build already executed under seed 0 does not train again.
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import math
import os
import re
import sys
import time
from pathlib import Path

from attention_course.chapter_tools import claims, notebook
from attention_course.seeding import SEED_VARIABLE

from . import chapters as book_chapters
from . import execution
from .execution import cpu_name

ROOT = book_chapters.ROOT
RECORDS = ROOT / "_build" / "claims-by-seed"
RECORDS_WITH_REWRITES = ROOT / "_build" / "claims-by-seed-graph-rewrites"
TABLE = claims.TABLE   # the status page shows it; a student's notebook reads it
CLAIM_CALL = re.compile(r"\b(?:claims\.)?(?:claim|measure)\(")
TABLE_SEEDS = list(range(8))   # the seeds of the table in claims_by_seed.json
MIN_TABLE_SEEDS = 3   # fewer whole seeds than this and the table is not written
MARGIN_SHARE = 0.25   # the least margin beyond the worst seed, as a share of the seeds' spread


def chapters_with_claims(numbers: list[int] | None = None) -> list[Path]:
    paths = sorted((book_chapters.BOOK / "chapters").glob("[0-9][0-9]_*.md"))
    paths = [p for p in paths if CLAIM_CALL.search(p.read_text())]
    if numbers:
        paths = [p for p in paths if int(p.stem[:2]) in numbers]
    return paths


def table_rows(recorded: dict[int, dict[str, claims.Claim]], seeds: list[int]) -> list[dict]:
    names = sorted({name for by_name in recorded.values() for name in by_name},
                   key=lambda n: (int(claims.NAME.fullmatch(n).group(1)), n))
    rows = []
    for name in names:
        found = [recorded.get(seed, {}).get(name) for seed in seeds]
        first = next(c for c in found if c is not None)
        margins = [c.margin for c in found if c is not None]
        values = [c.value for c in found if c is not None]
        spread = max(values) - min(values) if values else math.nan
        holds = all(c is not None and c.holds for c in found)
        rows.append({
            "name": name, "chapter": first.chapter, "about": first.about, "op": first.op,
            "threshold": first.threshold, "fmt": first.fmt,
            "values": {str(seed): (None if c is None else c.value) for seed, c in zip(seeds, found)},
            # a measurement asserts nothing: no margin
            "margin": min(margins, default=-math.inf) if first.asserted else None,
            "spread": spread,
            "holds": holds,
            # holds with room to spare: a quarter of the spread beyond the worst seed
            "steady": holds and (not first.asserted or min(margins) >= MARGIN_SHARE * spread),
        })
    return rows


def margin_share(row: dict) -> float:
    """The smallest margin as a share of the seed-to-seed spread (inf where every seed agrees)."""
    if row["margin"] < 0:
        return -math.inf
    return row["margin"] / row["spread"] if row["spread"] > 0 else math.inf


def print_table(rows: list[dict], seeds: list[int]) -> None:
    def show(value, fmt):
        return "missing" if value is None else f"{value:{fmt}}"

    header = f"{'claim':34s} {'threshold':>12s} " + " ".join(f"{'seed ' + str(s):>9s}" for s in seeds)
    print(header + f" {'margin':>9s} {'spread':>9s}")
    for row in rows:
        values = " ".join(f"{show(row['values'][str(s)], row['fmt']):>9s}" for s in seeds)
        flag = ("" if row["steady"] else "   <-- margin under a quarter of the spread"
                if row["holds"] else "   <-- FAILS")
        if row["op"] == claims.MEASURED:
            print(f"{row['name']:34s} {'(measured)':>12s} {values} {'':>9s}{flag}")
        else:
            print(f"{row['name']:34s} {row['op']:>2s} {row['threshold']:9{row['fmt']}} {values} "
                  f"{row['margin']:9{row['fmt']}} {row['spread']:9{row['fmt']}}{flag}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=TABLE_SEEDS)
    parser.add_argument("--chapters", type=int, nargs="*", help="chapter numbers (default: all with claims)")
    parser.add_argument("--pages", nargs="*", help="page names (11_training_transformer): these pages only")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--no-write", action="store_true", help=f"do not rewrite {TABLE.name}")
    parser.add_argument("--table-only", action="store_true",
                        help="execute nothing: the table from the records of earlier runs")
    parser.add_argument("--graph-rewrites", action="store_true",
                        help="with TensorFlow's graph optimizer on (different round-off); implies --no-write")
    args = parser.parse_args(argv)

    cache = Path(os.environ.get("ATTENTION_COURSE_CACHE", ROOT / "_build" / "course_cache"))
    records, extra = RECORDS, {notebook.GRAPH_REWRITES_VARIABLE: "0"}
    if args.graph_rewrites:
        # the cache's keys do not tell the two settings apart: another folder
        cache = cache.with_name(cache.name + "-graph-rewrites")
        records, extra = RECORDS_WITH_REWRITES, {notebook.GRAPH_REWRITES_VARIABLE: "1"}
        args.no_write = True
    os.environ["ATTENTION_COURSE_CACHE"] = str(cache)
    paths = [] if args.table_only else chapters_with_claims(args.chapters)
    if args.pages:
        paths = [p for p in paths if p.stem in args.pages]
    jobs, needs = [], book_chapters.shared_models(paths)
    for seed in args.seeds:
        by_path = {}
        for path in paths:
            claims.forget_page(records, path.stem, seed)
            by_path[path] = execution.Job(path, environment={
                SEED_VARIABLE: str(seed), claims.FOLDER_VARIABLE: str(records),
                claims.MODE_VARIABLE: "record"} | extra,
                # seed by seed, chapters in order: a run stopped early leaves whole seeds
                expected_seconds=-(1000 * seed + int(path.stem[:2])))
            by_path[path].after = [by_path[e] for e in needs[path]]
            jobs.append(by_path[path])
    print(f"executing {len(paths)} chapter(s) under seeds {args.seeds} "
          + ("with the graph optimizer on " if args.graph_rewrites else "")
          + f"({len(jobs)} runs, {args.workers} kernel(s))")
    started = time.perf_counter()
    results = execution.execute_all(
        jobs, args.workers,
        report=lambda line: print(line + f" [{time.perf_counter() - started:.0f} s]", flush=True))
    failed = [r for r in results if r.error is not None]
    for result in failed:
        seed = result.job.environment[SEED_VARIABLE]
        print(f"\n===== {result.job.path.name}, seed {seed}: failed to execute =====\n{result.error}")

    # The table covers every chapter with claims, from the records of this run and
    # of earlier ones (``--chapters 8`` re-measures chapter 8 and keeps the rest).
    every = chapters_with_claims()
    numbers = {int(p.stem[:2]) for p in every}
    loaded = claims.load(records)
    recorded = {seed: {n: c for n, c in loaded.get(seed, {}).items() if c.chapter in numbers}
                for seed in TABLE_SEEDS}
    # The table covers seeds 0, 1, ... as far as every page with claims has records under
    # each: a run stopped early (they execute seed by seed) still gives a table of whole seeds.
    missing = {seed: sorted(p.stem for p in every
                            if not any(c.page == p.stem for c in recorded[seed].values()))
               for seed in TABLE_SEEDS}
    seeds = list(itertools.takewhile(lambda seed: not missing[seed], TABLE_SEEDS))
    whole = bool(seeds)
    if not whole:
        # No seed has records of every page with claims (a --pages run where the others' records
        # were never made here, or were cleaned): the verdict covers the pages this run executed,
        # under its seeds, and no table is written from it.
        ran = {path.stem for path in paths} or set(args.pages or ())
        seeds = list(args.seeds)
        recorded = {seed: {n: c for n, c in loaded.get(seed, {}).items() if c.page in ran}
                    for seed in seeds}
        print(f"\nno seed has records of every page with claims (under seed {TABLE_SEEDS[0]}, none for "
              f"{', '.join(missing[TABLE_SEEDS[0]])}): the claims of the pages run, under seeds {seeds}")
    rows = table_rows(recorded, seeds)
    print()
    print_table(rows, seeds)
    asserted = [r for r in rows if r["op"] != claims.MEASURED]
    print("\nsmallest margins as a share of the seed-to-seed spread (the rule asks for "
          f"{MARGIN_SHARE:g}): " + "; ".join(
              f"{r['name']} {r['margin']:{r['fmt']}} / {r['spread']:{r['fmt']}} = "
              f"{margin_share(r):.2f}" for r in sorted(asserted, key=margin_share)[:5]))
    if whole and seeds != TABLE_SEEDS:
        seed = TABLE_SEEDS[len(seeds)]
        print(f"the table covers seeds {seeds}: no records under seed {seed} for {', '.join(missing[seed])}")

    if not args.no_write and whole and len(seeds) >= MIN_TABLE_SEEDS and not failed:
        TABLE.write_text(json.dumps({
            "seeds": seeds,
            "measured": {"date": datetime.date.today().isoformat(), "cpu": cpu_name(),
                         "cores": os.cpu_count(), "seconds": round(time.perf_counter() - started)},
            "claims": rows}, indent=1, ensure_ascii=False) + "\n")
        print(f"wrote {TABLE}")
    elif not args.no_write:
        print(f"{TABLE.name} not rewritten: " + ("not every page with claims has records"
                                                 if not whole
                                                 else f"fewer than {MIN_TABLE_SEEDS} whole seeds"
                                                 if len(seeds) < MIN_TABLE_SEEDS
                                                 else "a chapter failed to execute"))
    ok = not failed and all(row["steady"] for row in rows)
    print(f"{len(asserted)} claims, {sum(r['holds'] for r in asserted)} hold under every seed "
          f"({sum(r['steady'] for r in asserted)} with a margin of {MARGIN_SHARE:g} of their spread), "
          f"{len(rows) - len(asserted)} measurements; "
          f"{len(failed)} run(s) failed to execute; {time.perf_counter() - started:.0f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
