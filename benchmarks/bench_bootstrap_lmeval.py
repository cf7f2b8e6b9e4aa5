"""glotbench vs lm-evaluation-harness: bootstrap standard error of binary F1 and MCC.

Same data (n binary gold/prediction pairs, ~70 % agreement, fixed seed), same
number of resamples B, one Python process driving both tools:

* lm-eval: ``lm_eval.api.metrics.bootstrap_stderr(f, items, iters=B)`` with
  ``f`` = ``f1_score`` / ``matthews_corrcoef`` (scikit-learn on every
  replicate), ``items`` = list of (gold, pred) tuples. It runs its own
  ``multiprocessing.Pool(cpu_count())`` in chunks of 1000 replicates, chunk i
  seeded with ``random.Random(i)``, and returns only the SE (ddof = 1).
* glotbench: ``glotbench.bootstrap_metric`` (statistics extraction included,
  exact support compression "auto", one thread), and the example-level path
  ``glotbench.resample.bootstrap(stats, metric, compress=False)`` that draws
  all n example indices per replicate, to show the speed without compression.

The SEs of the two tools come from independent replicates, so they differ by
Monte Carlo error only: an SD estimated from B replicates has a relative SD of
about 1/sqrt(2B). The script prints the z of each difference.

Run from the repository root:

    PYTHONPATH=src /work/bench-venv/bin/python benchmarks/bench_bootstrap_lmeval.py
    PYTHONPATH=src /work/bench-venv/bin/python benchmarks/bench_bootstrap_lmeval.py --resamples 1000
"""

from __future__ import annotations

import os

# lm-eval's progress bar; tqdm reads TQDM_* variables when it is first imported.
os.environ.setdefault("TQDM_DISABLE", "1")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import io  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402
import sklearn.metrics  # noqa: E402,F401  (imported before lm-eval forks its workers)
from _common import (  # noqa: E402
    load_average,
    machine_info,
    print_header,
    print_table,
    se_z,
    timed_cpu,
    write_json,
)

import glotbench  # noqa: E402
from glotbench.resample import bootstrap  # noqa: E402

TARGET_RATIO = 50.0


def ratio_text(ratio: float) -> str:
    return f"{ratio:.0f}x" if ratio >= 10 else f"{ratio:.1f}x"


def make_data(n: int, agreement: float, positive_rate: float, seed: int):
    """Binary gold labels and predictions that agree with them ~``agreement`` of the time."""
    rng = np.random.default_rng(seed)
    gold = (rng.random(n) < positive_rate).astype(int)
    pred = np.where(rng.random(n) < agreement, gold, 1 - gold)
    return gold.tolist(), pred.tolist()  # plain Python ints, as lm-eval gets them


def glotbench_auto(name: str, preds, golds, resamples: int, seed: int):
    res = glotbench.bootstrap_metric(name, preds, golds, n_resamples=resamples, seed=seed)
    return res.score, res.standard_error


def glotbench_example_level(name: str, preds, golds, resamples: int, seed: int):
    metric = glotbench.get_metric(name).fit(preds, golds)
    stats = metric.stats(preds, golds)
    res = bootstrap(stats, metric, n_resamples=resamples, seed=seed, compress=False)
    return res.score, res.standard_error


def lmeval_stderr(fn, items, resamples: int) -> float:
    from lm_eval.api.metrics import bootstrap_stderr

    with contextlib.redirect_stdout(io.StringIO()):  # "bootstrapping for stddev: ..."
        return bootstrap_stderr(fn, items, iters=resamples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=10_000, help="examples (default 10,000)")
    parser.add_argument("--resamples", type=int, default=10_000, help="B (default 10,000)")
    parser.add_argument(
        "--repeats", type=int, default=3, help="timed runs per glotbench variant; min is reported"
    )
    parser.add_argument(
        "--peer-repeats",
        type=int,
        default=None,
        help="timed runs per lm-eval call (default: --repeats); one run at full size takes ~100 s",
    )
    parser.add_argument(
        "--metrics",
        nargs="+",
        choices=["f1_binary", "mcc"],
        default=["f1_binary", "mcc"],
        help="metrics to run (one per process lets two run at once on a busy machine)",
    )
    parser.add_argument("--seed", type=int, default=0, help="data seed and glotbench seed")
    parser.add_argument("--agreement", type=float, default=0.7)
    parser.add_argument("--positive-rate", type=float, default=0.5)
    parser.add_argument("--json", default=None, help="also write the results to this JSON file")
    args = parser.parse_args()
    peer_repeats = args.peer_repeats if args.peer_repeats is not None else args.repeats

    from lm_eval.api.metrics import f1_score, matthews_corrcoef

    if os.environ.get("DISABLE_MULTIPROC"):
        print("warning: DISABLE_MULTIPROC is set, so lm-eval runs single-process", file=sys.stderr)

    info = machine_info(["numpy", "scipy", "scikit-learn", "lm_eval", "torch"])
    info.update(n=args.n, resamples=args.resamples, repeats=args.repeats, peer_repeats=peer_repeats)
    # lm-eval draws iters // chunk chunks of chunk = min(1000, iters) replicates
    chunk = min(1000, args.resamples)
    b_lmeval = (args.resamples // chunk) * chunk
    info["lm_eval_effective_resamples"] = b_lmeval
    print_header("bootstrap SE: glotbench vs lm-evaluation-harness bootstrap_stderr", info)

    golds, preds = make_data(args.n, args.agreement, args.positive_rate, args.seed)
    items = list(zip(golds, preds, strict=True))
    print(
        f"data: n={args.n}, agreement={np.mean(np.equal(golds, preds)):.4f}, "
        f"positive rate={np.mean(golds):.4f}\n"
    )

    # warm-up (imports, caches), not timed
    glotbench_auto("f1_binary", preds, golds, 256, args.seed)
    glotbench_example_level("f1_binary", preds, golds, 256, args.seed)

    rows = []
    for name, lm_fn in (("f1_binary", f1_score), ("mcc", matthews_corrcoef)):
        if name not in args.metrics:
            continue
        point_lm = float(lm_fn(items))
        variants = [
            ("glotbench (compressed support)", glotbench_auto),
            ("glotbench compress=False", glotbench_example_level),
        ]
        results = []
        for tool, fn in variants:
            t = timed_cpu(
                lambda fn=fn, name=name: fn(name, preds, golds, args.resamples, args.seed),
                args.repeats,
            )
            score, se = t.result
            results.append(dict(tool=tool, timing=t, score=score, se=se, resamples=args.resamples))
        print(f"[{name}] glotbench done; lm-eval running (load {load_average()}) ...", flush=True)
        t = timed_cpu(lambda lm_fn=lm_fn: lmeval_stderr(lm_fn, items, args.resamples), peer_repeats)
        lm_row = dict(
            tool=f"lm-eval bootstrap_stderr (Pool of {os.cpu_count()})",
            timing=t,
            score=point_lm,
            se=float(t.result),
            resamples=b_lmeval,
        )
        for r in (*results, lm_row):
            r["seconds"] = r["timing"].seconds
            r["cpu_seconds"] = r["timing"].cpu_seconds
            r["ratio"] = lm_row["timing"].seconds / r["timing"].seconds
            r["cpu_ratio"] = lm_row["timing"].cpu_seconds / max(r["timing"].cpu_seconds, 1e-9)
            r["z_vs_lmeval"] = se_z(r["se"], r["resamples"], lm_row["se"], lm_row["resamples"])
            r["rel_diff"] = r["se"] / lm_row["se"] - 1.0
            rows.append(dict(metric=name, **r))
        print(f"[{name}] done (load {load_average()})", flush=True)

    print()

    def times_x(r):
        return ", ".join(f"{t:.3f}" for t in r["timing"].times)

    for r in rows:
        r["wall s (all runs)"] = times_x(r)
        r["speed-up (wall)"] = ratio_text(r["ratio"])
        r["speed-up (CPU)"] = ratio_text(r["cpu_ratio"])
        r["SE rel. diff"] = f"{100 * r['rel_diff']:+.2f}%"
        r["z (SE diff)"] = f"{r['z_vs_lmeval']:+.2f}"
    print_table(
        rows,
        [
            "metric",
            "tool",
            "seconds",
            "wall s (all runs)",
            "cpu_seconds",
            "speed-up (wall)",
            "speed-up (CPU)",
            "score",
            "se",
            "SE rel. diff",
            "z (SE diff)",
        ],
    )
    tol = 1 / np.sqrt(2 * args.resamples)
    print(
        "seconds: minimum wall-clock time over the runs; cpu_seconds: minimum CPU time "
        "(user + system, including lm-eval's pool workers).\n"
        f"Monte Carlo error: relative SD of an SE from B={args.resamples} replicates "
        f"≈ 1/sqrt(2B) = {100 * tol:.2f}% (difference of two: {100 * tol * np.sqrt(2):.2f}%); "
        "|z| < 2 means agreement."
    )

    for r in rows:
        if r["tool"].startswith("glotbench (compressed"):
            met = r["ratio"] >= TARGET_RATIO
            print(
                f"target >= {TARGET_RATIO:.0f}x for {r['metric']}: "
                f"{r['ratio']:.0f}x -> {'met' if met else 'NOT met'}"
            )
        if r["tool"].startswith("glotbench") and abs(r["z_vs_lmeval"]) >= 3:
            print(
                f"warning: {r['metric']} {r['tool']} SE differs from lm-eval with "
                f"z = {r['z_vs_lmeval']:+.2f}"
            )
    print(f"load average at end: {load_average()}")
    for r in rows:
        timing = r.pop("timing")
        r.update(times=timing.times, cpu_times=timing.cpu_times)
    write_json(args.json, {"info": info, "rows": rows})
    return 0


if __name__ == "__main__":  # required: lm-eval starts a multiprocessing pool
    raise SystemExit(main())
