"""Linear mixed models: fit time of glotbench vs lme4 (R) and statsmodels MixedLM.

Designs (all fitted by REML on the same CSV by the three tools):

* the golden designs of tests/fixtures/mixed (nested, crossed, unbalanced,
  singular, random slopes) — statsmodels only where it can express the model
  (one grouping factor, or crossed factors as variance components);
* a simulated 20,000-row crossed design ``score ~ task + (1 | model) +
  (1 | language)``: 50 models × 40 languages × 5 tasks × 2 seeds.

glotbench's time is the fit *and* the Satterthwaite preparation (Hessian and
Jacobian of the deviance), which lme4's ``lmer`` does not include; the R time
is ``lmerTest::lmer`` (fit + the same Satterthwaite preparation), measured
inside R with ``system.time`` (R start-up excluded). statsmodels has no
Satterthwaite df at all. Minimum of ``--repeats`` runs.

Run: PYTHONPATH=src python benchmarks/bench_lmm.py [--repeats 3] [--no-r]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from _common import timed

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


def r_time(csv: Path, formula: str, repeats: int) -> float | None:
    if shutil.which("Rscript") is None:
        return None
    script = f"""
suppressPackageStartupMessages(library(lmerTest))
options(contrasts = c("contr.sum", "contr.poly"))
d <- read.csv("{csv}", stringsAsFactors = FALSE)
best <- Inf
for (i in 1:{repeats}) {{
  t <- system.time(m <- lmerTest::lmer({formula}, data = d))[["elapsed"]]
  best <- min(best, t)
}}
cat(best, "\\n")
"""
    out = subprocess.run(["Rscript", "-e", script], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        return None
    return float(out.stdout.strip().split()[-1])


def statsmodels_time(data: pd.DataFrame, formula: str, repeats: int) -> float | None:
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

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        best, _, _ = timed(fit, repeats)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-r", action="store_true")
    parser.add_argument("--no-statsmodels-large", action="store_true")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        large = Path(tmp) / "crossed_20000.csv"
        simulate_large(large)
        designs = {name: (FIXTURES / csv, f) for name, (csv, f) in DESIGNS.items()}
        designs["crossed 20,000 rows"] = (large, "score ~ task + (1 | model) + (1 | language)")
        print(
            f"{'design':22s} {'rows':>7s} {'glotbench':>10s} {'lme4+lmerTest':>14s} "
            f"{'statsmodels':>12s}"
        )
        for name, (csv, formula) in designs.items():
            data = pd.read_csv(csv)
            ours, _, _ = timed(lambda d=data, f=formula: lmm(f, d), args.repeats)
            theirs = None if args.no_r else r_time(csv, formula, args.repeats)
            sm = None
            if not (args.no_statsmodels_large and len(data) > 5000):
                sm = statsmodels_time(data, formula, 1 if len(data) > 5000 else args.repeats)

            def fmt(x: float | None) -> str:
                return f"{x:.3f} s" if x is not None else "n/a"

            print(f"{name:22s} {len(data):7d} {fmt(ours):>10s} {fmt(theirs):>14s} {fmt(sm):>12s}")


if __name__ == "__main__":
    main()
