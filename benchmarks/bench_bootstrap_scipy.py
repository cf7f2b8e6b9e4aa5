"""glotbench vs scipy.stats.bootstrap: percentile and BCa intervals of mean-type metrics.

Two metrics that are the mean of one per-example value, n examples, B resamples:

* accuracy: 0/1 correctness values (two distinct statistic rows, so glotbench
  uses its exact support compression);
* a continuous SQuAD-F1-like metric: per-example values in [0, 1], a point
  mass at 1 (exact answers), a point mass at 0 (no shared token) and a
  continuous part in between. More than n/4 distinct values, so glotbench's
  "auto" does *not* compress and draws all n example indices per replicate.

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

CONFIDENCE = 0.95


def make_accuracy(n: int, rng: np.random.Generator) -> np.ndarray:
    return (rng.random(n) < 0.7).astype(np.float64)


def make_squad_like(n: int, rng: np.random.Generator) -> np.ndarray:
    """45 % exact answers (1.0), 20 % no overlap (0.0), 35 % partial overlap ~ Beta(2, 2)."""
    u = rng.random(n)
    partial = rng.beta(2.0, 2.0, size=n)
    return np.where(u < 0.45, 1.0, np.where(u < 0.65, 0.0, partial))


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
    ]

    # warm-up, not timed
    run_glotbench(datasets[0][1], datasets[0][2], "bca", 256, args.seed, "auto")()
    run_scipy(datasets[0][1][:500], "BCa", 256, args.seed, None)()

    rows = []
    for name, values, metric in datasets:
        distinct = np.unique(values).size
        analytic = float(values.std(ddof=0) / math.sqrt(values.size))
        print(
            f"[{name}] mean={values.mean():.6f}, distinct values={distinct} "
            f"({'compressed' if 4 * distinct <= values.size else 'not compressed'} under "
            f"compress='auto'), analytic SE={analytic:.6g}; load {load_average()}",
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
            if 4 * distinct <= values.size:
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
            )
            if tool == "glotbench" and option == "compress=auto":
                reference[method] = row
            rows.append(row)

        for row in rows:
            if row["metric"] != name:
                continue
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
    print(f"load average at end: {load_average()}")
    write_json(args.json, {"info": info, "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
