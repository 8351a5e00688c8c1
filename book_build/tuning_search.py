"""Run every comparison's search, each arm at each value alike, and write the table the chapters use.

Run by ``make tune`` (``python -m book_build.tuning_search``, or ``scripts/tune_comparisons.py``;
not part of ``make book`` or ``make test``).  For every
:class:`attention_course.training.tuning.Comparison` (or those named with
``--only``), every arm is trained at every value of the comparison's setting
under each of its seeds, in parallel processes (one per core, each with its
share of the threads), and the metric on held-out data is recorded.  The
table (``attention_course/training/tuned_settings.json``) keeps every
comparison's results, each arm's best value and the key of the code that made
them; entries of comparisons not run this time are kept.

    python scripts/tune_comparisons.py                      # every comparison
    python scripts/tune_comparisons.py --only ch8_plain_vs_residual
    python scripts/tune_comparisons.py --list

Runs that train go through the course's model cache, so a search stopped
midway and started again loads what it had trained.  Exit status 1 if a run
failed or an arm's best value lies at an edge of its grid (the grid did not
bracket it: widen it).
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import sys
import time
import traceback
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from attention_course.training import tuning

from .execution import cpu_name

THREAD_VARIABLES = ("TF_NUM_INTRAOP_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                    "MKL_NUM_THREADS")


def _start_worker(threads: int) -> None:
    for name in THREAD_VARIABLES:
        os.environ[name] = str(threads)
    os.environ["TF_NUM_INTEROP_THREADS"] = "1"
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def run_one(name: str, arm: str, value: float, seed: int) -> tuple[float | None, float, str | None]:
    """Train one arm at one value under one seed: (metric, seconds, error or None)."""
    started = time.perf_counter()
    try:
        import keras

        keras.utils.set_random_seed(seed)
        metric = float(tuning.comparisons()[name].run(arm, value, seed))
        return (metric if math.isfinite(metric) else None), time.perf_counter() - started, None
    except Exception:  # one failed run is reported, the others go on
        return None, time.perf_counter() - started, traceback.format_exc()


def search(comparisons: list[tuning.Comparison], workers: int) -> tuple[dict, list[str]]:
    """{name: table entry} for ``comparisons``, and the failures."""
    import multiprocessing

    jobs = [(c.name, arm, value, seed) for c in comparisons
            for arm in c.arms for value in c.values for seed in c.seeds]
    results = {c.name: {arm: {str(v): [None] * len(c.seeds) for v in c.values} for arm in c.arms}
               for c in comparisons}
    failures, started = [], time.perf_counter()

    def finished():
        """(job, its result) as each finishes: in this process with one worker, else in a pool."""
        if workers == 1:
            for job in jobs:
                yield job, run_one(*job)
            return
        threads = max(1, (os.cpu_count() or 1) // workers)
        context = multiprocessing.get_context("spawn")   # fresh interpreters: no TensorFlow state shared
        with ProcessPoolExecutor(workers, mp_context=context, initializer=_start_worker,
                                 initargs=(threads,)) as pool:
            futures = {pool.submit(run_one, *job): job for job in jobs}
            for future in as_completed(futures):
                yield futures[future], future.result()

    for done, (job, result) in enumerate(finished(), 1):
        name, arm, value, seed = job
        metric, seconds, error = result
        comparison = next(c for c in comparisons if c.name == name)
        results[name][arm][str(value)][comparison.seeds.index(seed)] = metric
        shown = "failed" if error else "diverged" if metric is None else f"{metric:.4g}"
        print(f"[{done}/{len(jobs)}] {name}: {arm}, {comparison.setting} {value:g}, seed {seed}: "
              f"{shown} ({seconds:.0f} s; {time.perf_counter() - started:.0f} s in all)", flush=True)
        if error:
            failures.append(f"{name} {arm} {value:g} seed {seed}:\n{error}")
    entries = {}
    for c in comparisons:
        entries[c.name] = {
            "key": c.key(), "chapter": c.chapter, "question": c.question, "setting": c.setting,
            "values": list(c.values), "seeds": list(c.seeds), "metric": c.metric,
            "higher_is_better": c.higher_is_better, "results": results[c.name],
            "best": c.best(results[c.name])}
    return entries, failures


def edges(entry: dict) -> list[str]:
    """The arms whose best value is the smallest or largest value tried.

    A grid that starts at 0 has no lower edge: 0 is the least any of the book's tuned
    settings can take (no dropout, no weight decay), so nothing smaller was left untried.
    """
    low, high = entry["values"][0], entry["values"][-1]
    edge = {high} if low == 0 else {low, high}
    return [arm for arm, best in entry["best"].items() if best in edge]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", help="the comparisons to run (default: all)")
    parser.add_argument("--list", action="store_true", help="list the comparisons and exit")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--no-write", action="store_true", help=f"do not rewrite {tuning.TABLE.name}")
    args = parser.parse_args(argv)
    known = tuning.comparisons()
    if args.list:
        for c in known.values():
            runs = len(c.arms) * len(c.values) * len(c.seeds)
            print(f"{c.name}: {', '.join(c.arms)}; {c.setting} in {list(c.values)}; "
                  f"seeds {list(c.seeds)} ({runs} runs)")
        return 0
    unknown = sorted(set(args.only or []) - set(known))
    if unknown:
        parser.error(f"no comparison called {', '.join(unknown)}; known: {', '.join(known) or 'none'}")
    chosen = [known[n] for n in (args.only or known)]
    started = time.perf_counter()
    entries, failures = search(chosen, args.workers)
    for failure in failures:
        print(f"\n===== failed: {failure}", file=sys.stderr)
    at_edges = {name: edges(e) for name, e in entries.items() if edges(e)}
    for name, entry in entries.items():
        print(f"\n{name} ({entry['setting']}; {entry['metric']}, "
              f"{'higher' if entry['higher_is_better'] else 'lower'} is better):")
        print(_format(entry))
    for name, arms in at_edges.items():
        print(f"{name}: the best value of {', '.join(arms)} is at an edge of the grid: widen it",
              file=sys.stderr)
    if not args.no_write and not failures:
        table = tuning.read_table()
        table["comparisons"].update(entries)
        table["measured"] = {"date": datetime.date.today().isoformat(), "cpu": cpu_name(),
                             "cores": os.cpu_count(), "seconds": round(time.perf_counter() - started)}
        tuning.TABLE.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
        print(f"wrote {tuning.TABLE}")
    return 1 if failures or at_edges else 0


def _format(entry: dict) -> str:
    lines = []
    for arm, by_value in entry["results"].items():
        cells = []
        for value in entry["values"]:
            scores = by_value[str(value)]
            mean = (sum(scores) / len(scores)) if all(s is not None for s in scores) else None
            mark = "*" if value == entry["best"][arm] else " "
            cells.append(f"{value:g}: {'diverged' if mean is None else f'{mean:.4g}'}{mark}")
        lines.append(f"  {arm:24s} " + "  ".join(cells))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
