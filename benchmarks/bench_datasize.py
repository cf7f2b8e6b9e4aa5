"""Evaluation-size analysis at scale: 30 models x 5 seeds x 20,000 tokens, 100 draws per cell.

Per-example statistics of simulated UPOS taggers (``token_accuracy``:
(correct, tokens) per sentence): tagger i has error rate 3 % + 0.3 % i, each
seed adds N(0, 0.3 %²) to it, and each sentence's errors are Binomial(tokens,
rate). Sentence lengths come from the UD English-EWT test file when
``../shared/data`` is present (else a fixed-seed draw of 5-40 tokens), cut at
20,000 tokens. The timed part is ``glotbench.analysis.datasize.datasize_analysis``
with the default size grid (100 … 20,000 tokens and all), the three
strategies, 100 draws per cell, weighted tau for models and for every run, and
ASO agreement (default: 25 draws per cell, 200 bootstrap iterations).
The target is under a minute on 2 cores.

    PYTHONPATH=src /work/bench-venv/bin/python benchmarks/bench_datasize.py
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from _common import machine_info, print_header, print_table, timed, write_json

from glotbench.analysis.datasize import datasize_analysis
from glotbench.metrics import get_metric

EWT = Path(__file__).resolve().parents[2] / "shared/data/ud/UD_English-EWT/en_ewt-ud-test.conllu"


def sentence_lengths(limit: int) -> tuple[np.ndarray, str]:
    if EWT.exists():
        import conllu

        lengths = []
        with EWT.open(encoding="utf-8") as fh:
            for sentence in conllu.parse_incr(fh):
                lengths.append(sum(isinstance(t["id"], int) for t in sentence))
        source = f"UD English-EWT test ({EWT})"
    else:
        lengths = list(np.random.default_rng(0).integers(5, 41, 5000))
        source = "simulated lengths (../shared/data absent)"
    lengths_arr = np.asarray(lengths, dtype=np.float64)
    keep = int(np.searchsorted(np.cumsum(lengths_arr), limit)) + 1
    return lengths_arr[:keep], source


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", type=int, default=30)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=20_000)
    parser.add_argument("--draws", type=int, default=100)
    parser.add_argument("--aso-draws", type=int, default=25, help="0 = every draw")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()

    info = machine_info(["numpy", "scipy"])
    print_header("datasize analysis", info)
    tokens, source = sentence_lengths(args.tokens)
    rng = np.random.default_rng(1)
    stats, models = [], []
    for i in range(args.models):
        for _ in range(args.seeds):
            rate = 0.03 + 0.003 * i + rng.normal(0, 0.003)
            wrong = rng.binomial(tokens.astype(np.int64), np.clip(rate, 0, 1))
            stats.append(np.column_stack([tokens - wrong, tokens]))
            models.append(f"tagger{i:02d}")
    stats_arr = np.stack(stats)
    metric = get_metric("token_accuracy")
    print(
        f"{args.models} models x {args.seeds} seeds, {tokens.size} sentences, "
        f"{tokens.sum():.0f} tokens ({source}); {args.draws} draws per cell"
    )
    seconds, all_times, result = timed(
        lambda: datasize_analysis(
            stats_arr,
            metric,
            models=models,
            tokens=tokens,
            n_draws=args.draws,
            aso_draws=args.aso_draws or None,
        ),
        args.repeats,
    )
    table = result.table[result.table["unit"] == "model"]
    print_table(
        table.to_dict(orient="records"),
        ["strategy", "size", "tokens_mean", "tau_mean", "tau_sd", "aso_disagreements_mean"],
    )
    print_table(
        result.recommendation.to_dict(orient="records"), ["strategy", "unit", "recommended_size"]
    )
    print(
        f"datasize_analysis: {seconds:.2f} s (min of {args.repeats}; all: "
        f"{', '.join(f'{t:.2f}' for t in all_times)}); target < 60 s on 2 cores"
    )
    write_json(
        args.json,
        {"info": info, "seconds": seconds, "times": all_times, "table": result.to_dict()["table"]},
    )


if __name__ == "__main__":
    main()
