"""Linear mixed models: fit time of glotbench vs lme4 + lmerTest (R) and statsmodels MixedLM.

Designs (all fitted by REML on the same CSV by the three tools):

* the golden designs of tests/fixtures/mixed (nested, crossed, unbalanced,
  singular, random slopes) — statsmodels only where it can express the model
  (one grouping factor, or crossed factors as variance components);
* a simulated 20,000-row crossed design ``score ~ task + (1 | model) +
  (1 | language)``: 50 models × 40 languages × 5 tasks × 2 seeds.

What is timed, for each tool, is the same job: from the data frame already in
memory to the fixed-effects table (estimate, SE, and for glotbench and lmerTest
the Satterthwaite df, t and p of every coefficient), with sum-to-zero contrasts
and REML:

* glotbench: ``lmm(formula, data).fixed_effects()`` — formula, design
  matrices, REML fit, the Satterthwaite preparation (Hessian of the deviance
  in the variance parameters and Jacobian of Var(β̂)) and the table;
* lme4 + lmerTest: ``summary(lmerTest::lmer(formula, data))$coefficients`` —
  the same steps (lmerTest computes the same Hessian and Jacobian inside
  ``lmer``), timed inside one R process with ``proc.time`` around each call, so
  R's start-up, package loading and CSV reading are not timed;
* statsmodels: ``smf.mixedlm(...).fit(reml=True)`` with its default optimiser
  and its default Hessian-based SEs (it has no Satterthwaite df); crossed
  intercepts are variance components within one group spanning all rows, the
  only way statsmodels expresses crossed random effects. Like glotbench's fit
  (``single_blas_thread``) it runs with one BLAS thread (``--peer-blas-threads``):
  on the shared 2-core machine a second OpenBLAS thread only spins and inflates
  CPU time. R uses Debian's reference BLAS (one thread).

Every tool runs ``--repeats`` times in this one run, side by side (statsmodels
``--large-peer-repeats`` times on the 20,000-row design, where one fit takes
hundreds of times longer than glotbench's); the minimum wall and CPU time
(user + system) of each is printed, with the ratios and the load average before
and after. The estimates are compared too (largest
difference of the fixed effects, of the Satterthwaite df and of σ² against
lmerTest), so the times are of the same model.

Run: PYTHONPATH=src python benchmarks/bench_lmm.py [--repeats 5] [--no-r]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import tempfile
import warnings
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd
from _common import load_average, machine_info, print_header, print_table, timed_cpu, write_json

from glotbench.analysis.mixed import lmm

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "mixed"

DESIGNS = {
    "nested": ("nested.csv", "delta ~ language * task * mode + (1 | architecture/model)"),
    "crossed": ("crossed.csv", "score ~ task * params + (1 | model) + (1 | language)"),
    "unbalanced": ("unbalanced.csv", "score ~ language * task + (1 | model)"),
    "singular": ("singular.csv", "score ~ language + (1 | model)"),
    "slopes": ("slopes.csv", "score ~ task + shots + (1 + shots | model)"),
}


def simulate_large(path: Path, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    models = [f"m{i:02d}" for i in range(50)]
    langs = [f"l{i:02d}" for i in range(40)]
    tasks = ["t1", "t2", "t3", "t4", "t5"]
    grid = pd.MultiIndex.from_product(
        [models, langs, tasks, [1, 2]], names=["model", "language", "task", "seed"]
    ).to_frame(index=False)
    mu = dict(zip(models, rng.normal(0, 0.05, len(models)), strict=True))
    la = dict(zip(langs, rng.normal(0, 0.08, len(langs)), strict=True))
    ta = dict(zip(tasks, [0.0, 0.03, -0.02, 0.05, -0.04], strict=True))
    grid["score"] = (
        0.6
        + grid["model"].map(mu)
        + grid["language"].map(la)
        + grid["task"].map(ta)
        + rng.normal(0, 0.04, len(grid))
    )
    grid.to_csv(path, index=False)


R_SCRIPT = r"""
suppressPackageStartupMessages({ library(lmerTest); library(jsonlite) })
options(contrasts = c("contr.sum", "contr.poly"))
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1], stringsAsFactors = FALSE)
f <- as.formula(args[2])
repeats <- as.integer(args[3])
wall <- numeric(repeats)
cpu <- numeric(repeats)
for (i in seq_len(repeats)) {
  invisible(gc())
  t0 <- proc.time()
  m <- lmerTest::lmer(f, data = d, REML = TRUE)
  co <- summary(m)$coefficients
  t1 <- proc.time() - t0
  wall[i] <- t1[["elapsed"]]
  cpu[i] <- t1[["user.self"]] + t1[["sys.self"]]
}
cat(toJSON(list(wall = wall, cpu = cpu, estimate = unname(co[, "Estimate"]),
                se = unname(co[, "Std. Error"]), df = unname(co[, "df"]),
                sigma2 = sigma(m)^2, lme4 = as.character(packageVersion("lme4")),
                lmerTest = as.character(packageVersion("lmerTest"))),
           digits = I(15)))
"""


class PeerResult(NamedTuple):
    wall: float
    cpu: float
    estimate: np.ndarray
    df: np.ndarray | None
    sigma2: float


def r_fit(csv: Path, formula: str, repeats: int) -> PeerResult | None:
    """Time lmerTest in one Rscript process (start-up and CSV reading not timed)."""
    if shutil.which("Rscript") is None:
        return None
    with tempfile.NamedTemporaryFile("w", suffix=".R", delete=False) as fh:
        fh.write(R_SCRIPT)
    try:
        out = subprocess.run(
            ["Rscript", fh.name, str(csv), formula, str(repeats)],
            capture_output=True,
            text=True,
            check=False,
        )
    finally:
        Path(fh.name).unlink()
    if out.returncode != 0:
        print(f"   Rscript failed: {out.stderr.strip()[-300:]}")
        return None
    res = json.loads(out.stdout.strip().splitlines()[-1])
    global R_VERSIONS
    R_VERSIONS = f"lme4 {res['lme4'][0]}, lmerTest {res['lmerTest'][0]}"
    return PeerResult(
        min(res["wall"]),
        min(res["cpu"]),
        np.asarray(res["estimate"], float),
        np.asarray(res["df"], float),
        float(res["sigma2"][0]),
    )


R_VERSIONS = "not run"


def statsmodels_fit(
    data: pd.DataFrame, formula: str, repeats: int, blas_threads: int = 1
) -> PeerResult | None:
    """Time statsmodels MixedLM (REML, default optimiser); None if it cannot express the model."""
    import statsmodels.formula.api as smf

    fixed, *random = [p.strip() for p in formula.split("+ (")]
    groups = [r.rstrip(")").split("|")[1].strip() for r in random]
    lhs = [r.split("|")[0].strip() for r in random]
    fixed = fixed.replace("language", "C(language, Sum)").replace("task", "C(task, Sum)")
    fixed = fixed.replace("mode", "C(mode, Sum)")
    if any("/" in g or ":" in g for g in groups):
        return None
    if len(groups) == 1:
        re_formula = "~" + lhs[0].replace("1 + ", "1+") if lhs[0] != "1" else None

        def fit():
            return smf.mixedlm(fixed, data, groups=groups[0], re_formula=re_formula).fit(reml=True)
    else:  # crossed intercepts as variance components within one all-encompassing group
        vc = {g: f"0 + C({g})" for g in groups}
        data = data.assign(_all=1)

        def fit():
            return smf.mixedlm(fixed, data, groups="_all", vc_formula=vc).fit(reml=True)

    from threadpoolctl import threadpool_limits

    limits = blas_threads if blas_threads > 0 else None
    with warnings.catch_warnings(), threadpool_limits(limits=limits, user_api="blas"):
        warnings.simplefilter("ignore")
        t = timed_cpu(fit, repeats)
    res = t.result
    return PeerResult(t.seconds, t.cpu_seconds, np.asarray(res.fe_params, float), None, res.scale)


def _max_diff(a: np.ndarray, b: np.ndarray | None) -> float:
    if b is None or len(a) != len(b):
        return float("nan")
    return float(np.max(np.abs(a - b)))


def _max_rel(a: np.ndarray, b: np.ndarray | None) -> float:
    if b is None or len(a) != len(b):
        return float("nan")
    return float(np.max(np.abs(a - b) / np.abs(b)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="runs of each tool on each design")
    parser.add_argument("--no-r", action="store_true", help="skip lme4 + lmerTest")
    parser.add_argument("--no-statsmodels", action="store_true")
    parser.add_argument("--no-statsmodels-large", action="store_true")
    parser.add_argument(
        "--large-peer-repeats",
        type=int,
        default=2,
        help="runs of statsmodels on designs over 5,000 rows (one takes minutes of CPU)",
    )
    parser.add_argument(
        "--peer-blas-threads",
        type=int,
        default=1,
        help="BLAS threads for statsmodels (default 1, as glotbench's fit uses; 0: no limit)",
    )
    parser.add_argument("--designs", nargs="*", default=None, help="subset of the designs")
    parser.add_argument("--json", default=None, help="also write the results here")
    args = parser.parse_args()

    info = machine_info(["numpy", "scipy", "statsmodels"])
    print_header("linear mixed models: glotbench vs lme4 + lmerTest and statsmodels", info)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        large = Path(tmp) / "crossed_20000.csv"
        simulate_large(large)
        designs = {name: (FIXTURES / csv, f) for name, (csv, f) in DESIGNS.items()}
        designs["crossed 20,000 rows"] = (large, "score ~ task + (1 | model) + (1 | language)")
        if args.designs:
            designs = {k: v for k, v in designs.items() if k in args.designs}
        for name, (csv, formula) in designs.items():
            data = pd.read_csv(csv)
            load0 = load_average().split()[0]
            ours = timed_cpu(lambda d=data, f=formula: lmm(f, d).fixed_effects(), args.repeats)
            table = ours.result
            est, df = table["estimate"].to_numpy(), table["df"].to_numpy()
            sigma2 = lmm(formula, data).residual_variance
            r = None if args.no_r else r_fit(csv, formula, args.repeats)
            if r:
                print(
                    f"{name}: glotbench {ours.cpu_seconds:.4f} s CPU, lmerTest {r.cpu:.4f} s; "
                    "statsmodels running ...",
                    flush=True,
                )
            sm = None
            if not (args.no_statsmodels or (args.no_statsmodels_large and len(data) > 5000)):
                sm_repeats = args.large_peer_repeats if len(data) > 5000 else args.repeats
                sm = statsmodels_fit(data, formula, sm_repeats, args.peer_blas_threads)
            row = {
                "design": name,
                "rows": len(data),
                "glotbench CPU s": ours.cpu_seconds,
                "glotbench wall s": ours.seconds,
                "lmerTest CPU s": r.cpu if r else float("nan"),
                "lmerTest wall s": r.wall if r else float("nan"),
                "statsmodels CPU s": sm.cpu if sm else float("nan"),
                "statsmodels wall s": sm.wall if sm else float("nan"),
                "x lmerTest (CPU)": r.cpu / ours.cpu_seconds if r else float("nan"),
                "x statsmodels (CPU)": sm.cpu / ours.cpu_seconds if sm else float("nan"),
                "max abs dβ R": _max_diff(est, r.estimate) if r else float("nan"),
                "max rel d(df) R": _max_rel(df, r.df) if r else float("nan"),
                "rel dσ² R": abs(sigma2 - r.sigma2) / r.sigma2 if r else float("nan"),
                "max abs dβ sm": _max_diff(est, sm.estimate) if sm else float("nan"),
                "load": f"{load0} -> {load_average().split()[0]}",
            }
            rows.append(row)
            print(
                f"{name}: glotbench {ours.cpu_seconds:.4f} s CPU, lmerTest "
                f"{row['lmerTest CPU s']:.4f} s, statsmodels {row['statsmodels CPU s']:.4f} s "
                f"(load {row['load']})",
                flush=True,
            )
    print(
        f"\nminimum of {args.repeats} runs each (statsmodels over 5,000 rows: "
        f"{args.large_peer_repeats}); R: {R_VERSIONS}\n"
    )
    times = ["design", "rows", "glotbench CPU s", "glotbench wall s", "lmerTest CPU s"]
    times += ["lmerTest wall s", "statsmodels CPU s", "statsmodels wall s", "load"]
    print_table(rows, times)
    checks = ["design", "x lmerTest (CPU)", "x statsmodels (CPU)", "max abs dβ R"]
    checks += ["max rel d(df) R", "rel dσ² R", "max abs dβ sm"]
    print_table(rows, checks)
    print(f"load average at end: {load_average()}")
    write_json(args.json, {"machine": info, "r": R_VERSIONS, "repeats": args.repeats, "rows": rows})


if __name__ == "__main__":
    main()
