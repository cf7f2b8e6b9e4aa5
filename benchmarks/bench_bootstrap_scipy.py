"""glotbench vs scipy.stats.bootstrap: percentile and BCa intervals of mean-type metrics.

Two metrics that are the mean of one per-example value, n examples, B resamples:

* accuracy: 0/1 correctness values (two distinct statistic rows, so glotbench
  uses its exact support compression);
* a continuous SQuAD-F1-like metric: per-example values in [0, 1], a point
  mass at 1 (exact answers), a point mass at 0 (no shared token) and a
  continuous part in between. More than n/4 distinct values, so glotbench's
  "auto" does not compress fully; it keeps the two point masses once in
  W @ S (exact partial compression, see ``glotbench.resample.weights``; the
  n example indices are drawn per replicate either way);
* purely continuous values (Beta(2, 2), all distinct, like segment-level
  scores): nothing to compress, n example indices drawn per replicate.

The **index-drawing floor** is the time to draw the B × n example indices
alone, exactly as the engine draws them (PCG64, int32, one generator per block
of 256 replicates, cache-sized slices), without using them: the lower bound
of any exact multinomial bootstrap that draws every index. Peak memory is the
peak of numpy/Python allocations (tracemalloc) in one extra, untimed run.

Tools (same values, same B, same confidence level 0.95):

* glotbench: ``glotbench.resample.bootstrap(stats, metric, method=...)`` with
  ``stats`` = (value, 1) rows (``MeanMetric.stats_from_values``); for accuracy
  also with ``compress=False`` to show the uncompressed speed;
* scipy: ``scipy.stats.bootstrap((x,), np.mean, vectorized=True, method=...,
  batch=None | 100, rng=np.random.default_rng(seed))``.

Agreement: the SEs as z of their difference (relative SD of an SD from B
replicates ≈ 1/sqrt(2B)), and each CI endpoint's difference in units of its
Monte Carlo SD (the SD of an α-quantile of B draws ≈ SE·sqrt(α(1-α)/B)/φ(z_α),
times sqrt(2) for a difference of two independent runs). The analytic SE of a
mean, sd(x, ddof=0)/sqrt(n), is printed for reference.

Run from the repository root:

    PYTHONPATH=src /work/bench-venv/bin/python benchmarks/bench_bootstrap_scipy.py
    PYTHONPATH=src /work/bench-venv/bin/python benchmarks/bench_bootstrap_scipy.py --resamples 1000
"""

from __future__ import annotations

import argparse
import math
import tracemalloc

import numpy as np
import scipy.stats
from _common import (
    load_average,
    machine_info,
    print_header,
    print_table,
    se_z,
    timed_cpu,
    write_json,
)
from scipy.special import ndtri

import glotbench
from glotbench.metrics import MeanMetric
from glotbench.resample import bootstrap
from glotbench.resample.engine import GATHER_ELEMENTS
from glotbench.resample.weights import BLOCK, block_rng, example_draws, make_support

CONFIDENCE = 0.95


def make_accuracy(n: int, rng: np.random.Generator) -> np.ndarray:
    return (rng.random(n) < 0.7).astype(np.float64)


def make_squad_like(n: int, rng: np.random.Generator) -> np.ndarray:
    """45 % exact answers (1.0), 20 % no overlap (0.0), 35 % partial overlap ~ Beta(2, 2)."""
    u = rng.random(n)
    partial = rng.beta(2.0, 2.0, size=n)
    return np.where(u < 0.45, 1.0, np.where(u < 0.65, 0.0, partial))


def make_continuous(n: int, rng: np.random.Generator) -> np.ndarray:
    """All-distinct continuous values (segment-level-score-like): Beta(2, 2)."""
    return rng.beta(2.0, 2.0, size=n)


def draw_floor(n: int, resamples: int, seed: int):
    """The B × n example indices alone, drawn as the engine draws them."""

    def fn():
        step = max(1, GATHER_ELEMENTS // n)
        for block in range(-(-resamples // BLOCK)):
            rng = block_rng(seed, block)
            rows = min(BLOCK, resamples - block * BLOCK)
            for first in range(0, rows, step):
                example_draws(rng, n, min(step, rows - first))
        return float("nan"), float("nan"), float("nan")

    return fn


def peak_mib(fn) -> float:
    """Peak traced allocation (MiB) of one call of ``fn``."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def run_glotbench(values, metric, method: str, resamples: int, seed: int, compress):
    def fn():
        stats = MeanMetric.stats_from_values(values)
        res = bootstrap(
            stats,
            metric,
            n_resamples=resamples,
            method=method,
            seed=seed,
            compress=compress,
            confidence_level=CONFIDENCE,
        )
        low, high = res.confidence_interval
        return res.standard_error, low, high

    return fn


def run_scipy(values, method: str, resamples: int, seed: int, batch):
    def fn():
        res = scipy.stats.bootstrap(
            (values,),
            np.mean,
            n_resamples=resamples,
            vectorized=True,
            method=method,
            batch=batch,
            confidence_level=CONFIDENCE,
            rng=np.random.default_rng(seed),
        )
        ci = res.confidence_interval
        return float(res.standard_error), float(ci.low), float(ci.high)

    return fn


def endpoint_mc_sd(se: float, resamples: int) -> float:
    """Monte Carlo SD of the difference of two independent α/2-quantile endpoints."""
    q = (1.0 - CONFIDENCE) / 2.0
    density = math.exp(-0.5 * ndtri(q) ** 2) / math.sqrt(2.0 * math.pi)
    return math.sqrt(2.0) * se * math.sqrt(q * (1.0 - q) / resamples) / density


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=10_000, help="examples (default 10,000)")
    parser.add_argument("--resamples", type=int, default=10_000, help="B (default 10,000)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per row; min reported")
    parser.add_argument("--seed", type=int, default=0, help="data seed and resampling seed")
    parser.add_argument("--json", default=None, help="also write the results to this JSON file")
    args = parser.parse_args()

    info = machine_info(["numpy", "scipy"])
    info.update(n=args.n, resamples=args.resamples, repeats=args.repeats)
    print_header("percentile / BCa bootstrap: glotbench vs scipy.stats.bootstrap", info)

    rng = np.random.default_rng(args.seed)
    datasets = [
        ("accuracy", make_accuracy(args.n, rng), glotbench.get_metric("accuracy")),
        ("squad_f1-like", make_squad_like(args.n, rng), glotbench.get_metric("squad_f1")),
        ("continuous", make_continuous(args.n, rng), glotbench.get_metric("squad_f1")),
    ]
    floor = timed_cpu(draw_floor(args.n, args.resamples, args.seed), args.repeats)
    print(
        f"index-drawing floor (B x n = {args.resamples * args.n:,} int32 indices): "
        f"{floor.seconds:.3f} s wall, {floor.cpu_seconds:.3f} s CPU",
        flush=True,
    )

    # warm-up, not timed
    run_glotbench(datasets[0][1], datasets[0][2], "bca", 256, args.seed, "auto")()
    run_scipy(datasets[0][1][:500], "BCa", 256, args.seed, None)()

    rows = []
    for name, values, metric in datasets:
        distinct = np.unique(values).size
        analytic = float(values.std(ddof=0) / math.sqrt(values.size))
        support = make_support(MeanMetric.stats_from_values(values), "auto")
        mode = (
            "compressed"
            if support.compressed
            else f"partially compressed: {support.heavy} heavy rows, {support.light} light examples"
            if support.heavy
            else "not compressed"
        )
        print(
            f"[{name}] mean={values.mean():.6f}, distinct values={distinct} "
            f"({mode} under compress='auto'), analytic SE={analytic:.6g}; "
            f"load {load_average()}",
            flush=True,
        )
        variants = []
        for method in ("percentile", "bca"):
            variants.append(
                (
                    "glotbench",
                    method,
                    "compress=auto",
                    run_glotbench(values, metric, method, args.resamples, args.seed, "auto"),
                )
            )
            if support.compressed or support.heavy:
                variants.append(
                    (
                        "glotbench",
                        method,
                        "compress=False",
                        run_glotbench(values, metric, method, args.resamples, args.seed, False),
                    )
                )
            scipy_method = "BCa" if method == "bca" else "percentile"
            for batch in (None, 100):
                variants.append(
                    (
                        "scipy",
                        method,
                        f"batch={batch}",
                        run_scipy(values, scipy_method, args.resamples, args.seed, batch),
                    )
                )
        reference: dict[str, dict] = {}
        for tool, method, option, fn in variants:
            t = timed_cpu(fn, args.repeats)
            peak = peak_mib(fn)
            se, low, high = t.result
            row = dict(
                metric=name,
                tool=tool,
                method=method,
                option=option,
                seconds=t.seconds,
                times=t.times,
                cpu_seconds=t.cpu_seconds,
                cpu_times=t.cpu_times,
                se=se,
                ci_low=low,
                ci_high=high,
                analytic_se=analytic,
                peak_mib=peak,
            )
            if tool == "glotbench" and option == "compress=auto":
                reference[method] = row
            rows.append(row)

        scipy100 = {
            r["method"]: r for r in rows if r["metric"] == name and r["option"] == "batch=100"
        }
        for row in rows:
            if row["metric"] != name:
                continue
            row["vs_scipy100"] = scipy100[row["method"]]["seconds"] / row["seconds"]
            row["vs_scipy100_cpu"] = scipy100[row["method"]]["cpu_seconds"] / row["cpu_seconds"]
            row["over_floor"] = row["seconds"] / floor.seconds
            row["over_floor_cpu"] = row["cpu_seconds"] / floor.cpu_seconds
            ref = reference[row["method"]]
            row["ratio"] = row["seconds"] / ref["seconds"]
            row["cpu_ratio"] = row["cpu_seconds"] / ref["cpu_seconds"]
            row["z_se"] = se_z(row["se"], args.resamples, ref["se"], args.resamples)
            mc = endpoint_mc_sd(ref["se"], args.resamples)
            row["z_low"] = (row["ci_low"] - ref["ci_low"]) / mc
            row["z_high"] = (row["ci_high"] - ref["ci_high"]) / mc
            row["se_vs_analytic"] = row["se"] / analytic - 1.0

    print()
    for r in rows:
        r["seconds (all runs)"] = ", ".join(f"{t:.3f}" for t in r["times"])
        r["scipy b100 / row (wall, CPU)"] = f"{r['vs_scipy100']:.2f}x, {r['vs_scipy100_cpu']:.2f}x"
        r["row / floor (wall, CPU)"] = f"{r['over_floor']:.2f}, {r['over_floor_cpu']:.2f}"
        r["peak MiB"] = f"{r['peak_mib']:.1f}"
        r["time / glotbench"] = f"{r['ratio']:.1f}x"
        r["CPU / glotbench"] = f"{r['cpu_ratio']:.1f}x"
        r["SE vs analytic"] = f"{100 * r['se_vs_analytic']:+.2f}%"
        r["z SE"] = f"{r['z_se']:+.2f}"
        r["z low, z high"] = f"{r['z_low']:+.2f}, {r['z_high']:+.2f}"
    print_table(
        rows,
        [
            "metric",
            "tool",
            "method",
            "option",
            "seconds",
            "seconds (all runs)",
            "cpu_seconds",
            "scipy b100 / row (wall, CPU)",
            "row / floor (wall, CPU)",
            "peak MiB",
            "time / glotbench",
            "CPU / glotbench",
            "se",
            "SE vs analytic",
            "ci_low",
            "ci_high",
            "z SE",
            "z low, z high",
        ],
    )
    print(
        "seconds / cpu_seconds: minimum wall-clock / CPU time over the runs. "
        "time (CPU) / glotbench: the row's time divided by glotbench (compress=auto) with the "
        "same interval method.\nz SE, z low, z high: difference from that glotbench row in "
        f"units of its Monte Carlo SD at B={args.resamples}; |z| < 2 means agreement."
    )
    print(
        "scipy b100 / row: scipy.stats.bootstrap(batch=100)'s time divided by the row's (> 1: the "
        "row is faster). row / floor: the row's time divided by the index-drawing floor "
        f"({floor.seconds:.3f} s wall, {floor.cpu_seconds:.3f} s CPU)."
    )
    print(f"load average at end: {load_average()}")
    floor_row = {"seconds": floor.seconds, "cpu_seconds": floor.cpu_seconds, "times": floor.times}
    write_json(args.json, {"info": info, "floor": floor_row, "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
