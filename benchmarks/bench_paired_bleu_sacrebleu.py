"""glotbench vs sacrebleu: paired bootstrap test of two MT systems on BLEU.

Data: n sentence triples (reference, baseline output, system output) of random
words from a Zipf-distributed synthetic vocabulary; each output keeps a
reference word with some probability and otherwise substitutes, drops or
inserts words. The system is the baseline with a share of its sentences
regenerated with a slightly higher keep probability, so the BLEU difference is
small and the pairing matters.

* sacrebleu: ``PairedTest([("base", hyps_a), ("sys", hyps_b)],
  {"BLEU": BLEU(references=[refs])}, references=None, test_type="bs",
  n_samples=B)``, then ``sigs, scores = ps()``. Seed: env ``SACREBLEU_SEED``
  (default 12345). Its p-value is the paired-bootstrap p-value of Koehn (2004)
  as sacrebleu computes it (see :func:`sacrebleu_p_value`); its ``ci`` is the
  half-width of the 95 % interval (see :func:`sacrebleu_ci_halfwidth`).
* glotbench: ``glotbench.get_metric("bleu")`` statistics of both systems
  stacked (2, n, k) and resampled together (paired) by
  ``glotbench.resample.bootstrap(stats, metric, n_resamples=B, names=[...])``;
  then the same p-value and CI conventions, computed below from glotbench's
  replicates.

Times are reported with statistics extraction (from raw strings: sacrebleu's
tokenisation and n-gram counting, done by both tools with sacrebleu's code)
and without it (resampling and scoring only: sacrebleu's PairedTest is run
with the statistics served from a cache; glotbench starts from the stacked
statistics).

Agreement: the two tools draw independent resamples, so their p-values
differ by Monte Carlo error (SD of a p estimated from B resamples ≈
sqrt(p(1-p)/B)); the script prints z of the differences. As an exactness check
it also scores sacrebleu's *own* resample indices with glotbench
(``mask_scores``), which must reproduce sacrebleu's p-value and CI.

Run from the repository root:

    PYTHONPATH=src /work/bench-venv/bin/python benchmarks/bench_paired_bleu_sacrebleu.py
"""

from __future__ import annotations

import argparse
import math
import os

import numpy as np
from _common import load_average, machine_info, print_header, print_table, timed_cpu, write_json
from sacrebleu.metrics import BLEU
from sacrebleu.significance import PairedTest
from scipy.special import ndtri

import glotbench
from glotbench.resample import bootstrap, mask_scores

# --------------------------------------------------------------------------
# sacrebleu's paired-bootstrap conventions, written out so that glotbench's
# replicates can be summarised the same way.
# --------------------------------------------------------------------------


def sacrebleu_p_value(
    rep_base: np.ndarray, rep_sys: np.ndarray, score_base: float, score_sys: float
) -> float:
    """Paired bootstrap p-value exactly as ``sacrebleu.significance._paired_bs_test``.

    For every bootstrap replicate b the absolute difference
    ``d_b = |sys_b − base_b|`` is taken; the distribution is centred at zero by
    subtracting its mean (the null hypothesis of no difference, Koehn 2004),
    and the p-value counts how often the centred difference exceeds the
    observed absolute difference, with the +1 correction:

        p = (#{b : d_b − mean(d) > |sys − base|} + 1) / (B + 1)
    """
    d = np.abs(np.asarray(rep_sys) - np.asarray(rep_base))
    centred = d - d.mean()
    observed = abs(score_sys - score_base)
    return (int(np.sum(centred > observed)) + 1) / (d.size + 1)


def sacrebleu_ci_halfwidth(replicates: np.ndarray) -> tuple[float, float]:
    """(mean, CI half-width) as ``sacrebleu.significance.estimate_ci``.

    Sort the B replicate scores; the 95 % interval runs from the (B // 40)-th
    to the (B − B // 40 − 1)-th order statistic (0-based); ``ci`` is half its
    width.
    """
    s = np.sort(np.asarray(replicates))
    lower = s.size // 40
    upper = s.size - lower - 1
    return float(s.mean()), 0.5 * float(s[upper] - s[lower])


# --------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------


def make_vocabulary(size: int, rng: np.random.Generator) -> list[str]:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(letters, size=rng.integers(2, 10))))
    return sorted(words)


def make_data(n: int, seed: int, keep_base: float, keep_sys: float, changed: float):
    rng = np.random.default_rng(seed)
    vocab = make_vocabulary(5000, rng)
    weights = 1.0 / np.arange(1, len(vocab) + 1) ** 1.1  # Zipf-like word frequencies
    weights /= weights.sum()

    def words(k: int) -> list[str]:
        return [vocab[i] for i in rng.choice(len(vocab), size=k, p=weights)]

    def translate(ref_words: list[str], keep: float) -> str:
        out: list[str] = []
        for w in ref_words:
            u = rng.random()
            if u < keep:
                out.append(w)
            elif u < keep + 0.7 * (1 - keep):
                out.extend(words(1))  # substitution
            elif u < keep + 0.85 * (1 - keep):
                out.extend([w, *words(1)])  # insertion
            # else: deletion
        return " ".join(out)

    refs_words = [words(int(rng.integers(8, 31))) for _ in range(n)]
    refs = [" ".join(r) for r in refs_words]
    hyps_a = [translate(r, keep_base) for r in refs_words]
    regenerate = rng.random(n) < changed
    hyps_b = [
        translate(r, keep_sys) if c else a
        for r, a, c in zip(refs_words, hyps_a, regenerate, strict=True)
    ]
    return refs, hyps_a, hyps_b


# --------------------------------------------------------------------------
# the two tools
# --------------------------------------------------------------------------


def sacrebleu_paired(hyps_a, hyps_b, bleu: BLEU, resamples: int):
    ps = PairedTest(
        [("base", hyps_a), ("sys", hyps_b)],
        {"BLEU": bleu},
        references=None,
        test_type="bs",
        n_samples=resamples,
    )
    _, scores = ps()
    base, sys_ = scores["BLEU"]
    return dict(
        score_base=base.score, score_sys=sys_.score, p=sys_.p_value, ci_base=base.ci, ci_sys=sys_.ci
    )


def sacrebleu_with_extraction(refs, hyps_a, hyps_b, resamples: int):
    return sacrebleu_paired(hyps_a, hyps_b, BLEU(references=[refs]), resamples)


def cached_bleu(refs, hyps_a, hyps_b) -> BLEU:
    """A sacrebleu BLEU whose statistics extraction is served from a cache."""
    bleu = BLEU(references=[refs])
    cache = {id(h): bleu._extract_corpus_statistics(h, None) for h in (hyps_a, hyps_b)}
    bleu._extract_corpus_statistics = lambda hyps, references: cache[id(hyps)]  # type: ignore
    return bleu


def glotbench_summary(stats: np.ndarray, metric, resamples: int, seed: int):
    res = bootstrap(stats, metric, n_resamples=resamples, seed=seed, names=["base", "sys"])
    rep_base, rep_sys = res.replicates[:, 0], res.replicates[:, 1]
    score_base, score_sys = (float(s) for s in res.estimates)
    return dict(
        score_base=score_base,
        score_sys=score_sys,
        p=sacrebleu_p_value(rep_base, rep_sys, score_base, score_sys),
        ci_base=sacrebleu_ci_halfwidth(rep_base)[1],
        ci_sys=sacrebleu_ci_halfwidth(rep_sys)[1],
        se_base=float(res.standard_errors[0]),
        se_sys=float(res.standard_errors[1]),
        se_diff=float(np.std(rep_sys - rep_base, ddof=1)),
        pct_halfwidth_sys=0.5 * float(res.high[1] - res.low[1]),
    )


def glotbench_stats(refs, hyps_a, hyps_b, metric=None):
    metric = metric or glotbench.get_metric("bleu")
    return metric, np.stack([metric.stats(hyps_a, refs), metric.stats(hyps_b, refs)])


def glotbench_with_extraction(refs, hyps_a, hyps_b, resamples: int, seed: int):
    metric, stats = glotbench_stats(refs, hyps_a, hyps_b)
    return glotbench_summary(stats, metric, resamples, seed)


def glotbench_on_sacrebleu_indices(stats, metric, resamples: int, seed_env: str):
    """glotbench scoring of sacrebleu's own resamples: score(W @ S), W from its indices."""
    seed = None if seed_env.lower() == "none" else int(seed_env)
    n = stats.shape[1]
    idx = np.random.default_rng(seed).choice(n, size=(resamples, n), replace=True)
    weights = np.stack([np.bincount(row, minlength=n) for row in idx]).astype(np.float64)
    # sacrebleu sums float32 statistics; the sums are integers well below 2**24, so exact
    reps = mask_scores(stats, metric, weights)
    score_base, score_sys = (float(s) for s in metric.score(stats.sum(axis=1)))
    return dict(
        score_base=score_base,
        score_sys=score_sys,
        p=sacrebleu_p_value(reps[:, 0], reps[:, 1], score_base, score_sys),
        ci_base=sacrebleu_ci_halfwidth(reps[:, 0])[1],
        ci_sys=sacrebleu_ci_halfwidth(reps[:, 1])[1],
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=2000, help="sentences (default 2,000)")
    parser.add_argument("--resamples", type=int, default=1000, help="B (default 1,000)")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per row; min reported")
    parser.add_argument("--seed", type=int, default=0, help="data seed and glotbench seed")
    parser.add_argument("--keep-base", type=float, default=0.60)
    parser.add_argument("--keep-sys", type=float, default=0.615)
    parser.add_argument(
        "--changed",
        type=float,
        default=0.3,
        help="share of sentences the system regenerates (default 0.3)",
    )
    parser.add_argument("--json", default=None, help="also write the results to this JSON file")
    args = parser.parse_args()
    seed_env = os.environ.get("SACREBLEU_SEED", "12345")

    info = machine_info(["numpy", "sacrebleu"])
    info.update(n=args.n, resamples=args.resamples, repeats=args.repeats, SACREBLEU_SEED=seed_env)
    print_header("paired bootstrap on BLEU: glotbench vs sacrebleu PairedTest", info)

    refs, hyps_a, hyps_b = make_data(args.n, args.seed, args.keep_base, args.keep_sys, args.changed)
    n_changed = sum(a != b for a, b in zip(hyps_a, hyps_b, strict=True))
    print(
        f"data: {args.n} sentences, {np.mean([len(r.split()) for r in refs]):.1f} words per "
        f"reference, system differs from baseline on {n_changed} sentences\n"
    )

    # warm-up (imports, tokeniser caches), not timed
    metric, stats = glotbench_stats(refs, hyps_a, hyps_b)
    glotbench_summary(stats, metric, 256, args.seed)
    sacrebleu_paired(hyps_a, hyps_b, cached_bleu(refs, hyps_a, hyps_b), 100)

    runs = [
        (
            "sacrebleu PairedTest",
            "with extraction",
            lambda: sacrebleu_with_extraction(refs, hyps_a, hyps_b, args.resamples),
        ),
        (
            "glotbench bootstrap",
            "with extraction",
            lambda: glotbench_with_extraction(refs, hyps_a, hyps_b, args.resamples, args.seed),
        ),
    ]
    bleu_cached = cached_bleu(refs, hyps_a, hyps_b)  # built outside the timed region
    runs += [
        (
            "sacrebleu PairedTest",
            "resampling only",
            lambda: sacrebleu_paired(hyps_a, hyps_b, bleu_cached, args.resamples),
        ),
        (
            "glotbench bootstrap",
            "resampling only",
            lambda: glotbench_summary(stats, metric, args.resamples, args.seed),
        ),
    ]
    rows = []
    for tool, scope, fn in runs:
        t = timed_cpu(fn, args.repeats)
        rows.append(
            dict(
                tool=tool,
                scope=scope,
                seconds=t.seconds,
                times=t.times,
                cpu_seconds=t.cpu_seconds,
                cpu_times=t.cpu_times,
                **t.result,
            )
        )
        print(f"{tool}, {scope}: {t.seconds:.4f} s (load {load_average()})", flush=True)
    exact = glotbench_on_sacrebleu_indices(stats, metric, args.resamples, seed_env)
    rows.append(
        dict(
            tool="glotbench on sacrebleu's indices",
            scope="(check)",
            seconds=float("nan"),
            times=[],
            cpu_seconds=float("nan"),
            cpu_times=[],
            **exact,
        )
    )

    by_key = {(r["tool"], r["scope"]): r for r in rows}
    for scope in ("with extraction", "resampling only"):
        sacre = by_key[("sacrebleu PairedTest", scope)]
        glot = by_key[("glotbench bootstrap", scope)]
        sacre["speed-up"] = sacre["speed-up (CPU)"] = "1.0x"
        glot["speed-up"] = f"{sacre['seconds'] / glot['seconds']:.1f}x"
        glot["speed-up (CPU)"] = f"{sacre['cpu_seconds'] / glot['cpu_seconds']:.1f}x"

    print()
    for r in rows:
        r["seconds (all runs)"] = ", ".join(f"{t:.4f}" for t in r["times"])
        r["BLEU base, sys"] = f"{r['score_base']:.4f}, {r['score_sys']:.4f}"
        r["ci half-width base, sys"] = f"{r['ci_base']:.4f}, {r['ci_sys']:.4f}"
    print_table(
        rows,
        [
            "tool",
            "scope",
            "seconds",
            "seconds (all runs)",
            "cpu_seconds",
            "speed-up",
            "speed-up (CPU)",
            "BLEU base, sys",
            "p",
            "ci half-width base, sys",
        ],
    )

    # agreement of the Monte Carlo estimates (independent resamples)
    sacre = by_key[("sacrebleu PairedTest", "with extraction")]
    glot = by_key[("glotbench bootstrap", "with extraction")]
    b = args.resamples
    p_bar = 0.5 * (sacre["p"] + glot["p"])
    p_sd = math.sqrt(2.0 * max(p_bar * (1.0 - p_bar), 1.0 / b) / b)
    q = 1.0 / 40.0
    density = math.exp(-0.5 * ndtri(q) ** 2) / math.sqrt(2.0 * math.pi)
    endpoint_sd = math.sqrt(q * (1 - q) / b) / density  # in units of the SE
    print("agreement (independent resamples; z = difference / its Monte Carlo SD):")
    print(
        f"  BLEU scores: |glotbench - sacrebleu| = "
        f"{abs(glot['score_base'] - sacre['score_base']):.2e}, "
        f"{abs(glot['score_sys'] - sacre['score_sys']):.2e}"
    )
    print(
        f"  p-value: sacrebleu {sacre['p']:.4f}, glotbench {glot['p']:.4f}, "
        f"z = {(glot['p'] - sacre['p']) / p_sd:+.2f} (MC SD of the difference {p_sd:.4f})"
    )
    for side in ("base", "sys"):
        # half-width SD ≈ endpoint SD / sqrt(2); difference of two tools: × sqrt(2)
        hw_sd = endpoint_sd * glot[f"se_{side}"]
        z = (glot[f"ci_{side}"] - sacre[f"ci_{side}"]) / hw_sd
        print(
            f"  CI half-width {side}: sacrebleu {sacre[f'ci_{side}']:.4f}, glotbench "
            f"{glot[f'ci_{side}']:.4f}, z = {z:+.2f} (MC SD {hw_sd:.4f})"
        )
    print(
        f"  glotbench bootstrap SE: base {glot['se_base']:.4f}, sys {glot['se_sys']:.4f}, "
        f"paired difference {glot['se_diff']:.4f} BLEU"
    )
    print(
        f"  exactness: glotbench on sacrebleu's own indices gives p = {exact['p']:.4f} "
        f"(sacrebleu {sacre['p']:.4f}), CI half-widths {exact['ci_base']:.4f}, "
        f"{exact['ci_sys']:.4f} (sacrebleu {sacre['ci_base']:.4f}, {sacre['ci_sys']:.4f})"
    )
    print(f"load average at end: {load_average()}")
    write_json(args.json, {"info": info, "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
