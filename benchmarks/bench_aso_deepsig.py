"""glotbench ASO vs deep-significance (``deepsig.aso``): speed and agreement.

Same scores, same formula (deepsig 1.2.8: violation ratio over the quantile
functions on the grid arange(dt, 1, dt), bootstrap spread of it with
const = sqrt(nm/(n+m)), eps_min = clip(ratio + sigma/const * z_{level}, 0, 1)),
same number of bootstrap iterations (default n = m = 1,000 scores, B = 1,000).

* speed: minimum wall and CPU time (user + system) of ``--repeats`` runs of
  glotbench (vectorised: sort once, searchsorted quantiles of all replicates at
  once) and of ``--peer-repeats`` runs of ``deepsig.aso(num_jobs=1)``; the
  ratios, and the load average before and after each tool;
* agreement: the violation ratios must be identical (no randomness); eps_min
  differs only by Monte Carlo error — glotbench's SD of eps_min over
  ``--seeds`` seeds is printed and the difference is expressed in those SDs.

Run from the repository root (deepsig must be in the venv):

    PYTHONPATH=src /work/bench-venv/bin/python benchmarks/bench_aso_deepsig.py
    PYTHONPATH=src /work/bench-venv/bin/python benchmarks/bench_aso_deepsig.py --n 200  # quick
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from _common import load_average, machine_info, print_header, print_table, timed_cpu, write_json

from glotbench import aso


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="scores per system (n = m)")
    parser.add_argument("--iterations", type=int, default=1000, help="bootstrap iterations")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--peer-repeats", type=int, default=1)
    parser.add_argument("--seeds", type=int, default=20, help="glotbench seeds for the MC SD")
    parser.add_argument("--shift", type=float, default=0.05, help="mean of A minus mean of B")
    parser.add_argument("--json", default=None, help="also write the results here")
    args = parser.parse_args()

    import deepsig
    from deepsig.aso import compute_violation_ratio

    info = machine_info(["deepsig", "numpy", "scipy", "torch"])
    print_header("ASO: glotbench vs deepsig.aso", info)
    rng = np.random.default_rng(0)
    a = rng.normal(args.shift, 1.0, args.n)
    b = rng.normal(0.0, 1.0, args.n)

    load0 = load_average()
    ours_t = timed_cpu(
        lambda: aso(a, b, num_bootstrap_iterations=args.iterations, seed=0), args.repeats
    )
    ours = ours_t.result
    load1 = load_average()
    print(f"glotbench done; deepsig running (load {load1}) ...", flush=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        peer_t = timed_cpu(
            lambda: deepsig.aso(
                a,
                b,
                num_bootstrap_iterations=args.iterations,
                seed=0,
                num_jobs=1,
                show_progress=False,
            ),
            args.peer_repeats,
        )
        theirs = peer_t.result
        load2 = load_average()
        ratio_theirs = compute_violation_ratio(a, b, dt=0.005)
    spread = np.array(
        [
            aso(a, b, num_bootstrap_iterations=args.iterations, seed=s).eps_min
            for s in range(1, args.seeds + 1)
        ]
    )
    mc_sd = float(spread.std(ddof=1))
    rows = [
        {
            "tool": "glotbench",
            "seconds": ours_t.seconds,
            "cpu_seconds": ours_t.cpu_seconds,
            "load": f"{load0.split()[0]} -> {load1.split()[0]}",
            "eps_min": ours.eps_min,
            "violation_ratio": ours.violation_ratio,
        },
        {
            "tool": "deepsig",
            "seconds": peer_t.seconds,
            "cpu_seconds": peer_t.cpu_seconds,
            "load": f"{load1.split()[0]} -> {load2.split()[0]}",
            "eps_min": float(theirs),
            "violation_ratio": float(ratio_theirs),
        },
    ]
    print(f"n = m = {args.n}, bootstrap iterations = {args.iterations}")
    print(f"minimum of {args.repeats} (glotbench) and {args.peer_repeats} (deepsig) runs")
    print_table(rows, ["tool", "seconds", "cpu_seconds", "eps_min", "violation_ratio", "load"])
    speedup = peer_t.seconds / ours_t.seconds
    speedup_cpu = peer_t.cpu_seconds / ours_t.cpu_seconds
    z = (ours.eps_min - float(theirs)) / (np.sqrt(2) * mc_sd) if mc_sd > 0 else float("nan")
    print(f"speed-up (deepsig / glotbench): {speedup:.0f}x wall, {speedup_cpu:.0f}x CPU")
    print(f"load average at end: {load_average()}")
    print(f"violation ratio difference: {abs(ours.violation_ratio - ratio_theirs):.3g} (exact)")
    print(
        f"eps_min: glotbench SD over {args.seeds} seeds = {mc_sd:.4g}; "
        f"difference = {ours.eps_min - float(theirs):+.4g} = {z:+.2f} Monte Carlo SDs "
        f"(glotbench mean over seeds {spread.mean():.4g})"
    )
    write_json(
        args.json,
        {
            "info": info,
            "rows": rows,
            "speedup": speedup,
            "speedup_cpu": speedup_cpu,
            "mc_sd": mc_sd,
            "z": z,
            "glotbench_times": ours_t.times,
            "glotbench_cpu_times": ours_t.cpu_times,
            "deepsig_times": peer_t.times,
            "deepsig_cpu_times": peer_t.cpu_times,
        },
    )


if __name__ == "__main__":
    main()
