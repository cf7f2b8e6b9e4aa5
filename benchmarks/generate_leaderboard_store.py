"""A seeded, realistic per-example leaderboard for the scale benchmarks (issue 27 item 5).

Writes the per-example file(s) that ``glotbench import examples`` reads (Parquet,
one file per task, row groups of ``--block`` models, so memory stays bounded by one
block whatever the size). Default: the Open-LLM-Leaderboard shape of issue 27,
5,000 models × 6 tasks × 10,000 examples (300M rows). The model of the data is an
item response model (Lord 1980; the 2PL of Birnbaum 1968), the shape of real
benchmark results (Polo et al. 2024, "tinyBenchmarks", fit IRT to the Open LLM
Leaderboard):

* abilities correlated across tasks: θ_mt = ρ·g_m + √(1 − ρ²)·e_mt, with a general
  ability g_m ~ N(0, 1), e_mt ~ N(0, 1) and ρ = ``--correlation`` (0.8);
* items with difficulty b_i ~ N(0, 1) and discrimination a_i ~ LogNormal(0, 0.3);
  p_mi = 1 / (1 + exp(−a_i (θ_mt − b_i)));
* 0/1 tasks (``accuracy``): outcome ~ Bernoulli(p_mi); continuous tasks
  (``squad_f1``, the last ``--continuous`` tasks): a score ~ Beta(κ p, κ (1 − p)),
  κ = 4, rounded to 1/100 (token-overlap F1 takes few distinct values);
* ties: a share ``--duplicates`` of the models re-upload another model's outputs
  exactly (identical scores on every example), and a share ``--twins`` have another
  model's abilities but their own outcomes (tied in expectation only);
* one seed per model (seed 0), as harnesses give.

The same ``--seed`` gives the same files byte for byte (each block of models draws
from its own stream, ``numpy.random.SeedSequence(seed).spawn``), so anyone can
rerun the figures. Small example (20 × 3 × 500, seconds):

    python benchmarks/generate_leaderboard_store.py --models 20 --tasks 3 \
        --examples 500 --out /tmp/lb && glotbench import examples /tmp/lb/task0.parquet
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


def abilities(
    n_models: int, n_tasks: int, correlation: float, twins: float, rng: np.random.Generator
) -> np.ndarray:
    """θ (models × tasks): a general ability plus a task-specific one; twins copy a θ row."""
    general = rng.normal(0, 1, (n_models, 1))
    theta = correlation * general + np.sqrt(1 - correlation**2) * rng.normal(
        0, 1, (n_models, n_tasks)
    )
    n_twins = int(round(twins * n_models))
    if n_twins and n_models > 1:
        twin = rng.choice(np.arange(1, n_models), n_twins, replace=False)
        theta[twin] = theta[rng.integers(0, twin)]  # each twin copies an earlier model
    return theta


def duplicates_of(n_models: int, share: float, rng: np.random.Generator) -> np.ndarray:
    """For each model, the model whose outputs it re-uploads (itself if none)."""
    source = np.arange(n_models)
    n_copies = int(round(share * n_models))
    if n_copies and n_models > 1:
        copies = rng.choice(np.arange(1, n_models), n_copies, replace=False)
        source[copies] = rng.integers(0, copies)  # an earlier model, so its outputs exist
        while (source[source] != source).any():  # a copy of a copy: copy the original
            source = source[source]
    return source


def outcomes(
    theta: np.ndarray, a: np.ndarray, b: np.ndarray, continuous: bool, rng: np.random.Generator
) -> np.ndarray:
    """Per-example scores (models × examples) under the 2PL model."""
    p = 1.0 / (1.0 + np.exp(-a[None, :] * (theta[:, None] - b[None, :])))
    if not continuous:
        return (rng.random(p.shape) < p).astype(np.float64)
    kappa = 4.0
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return np.round(rng.beta(kappa * p, kappa * (1 - p)), 2)


def generate(args: argparse.Namespace) -> dict[str, Any]:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    root = np.random.SeedSequence(args.seed)
    design_seq, *task_seqs = root.spawn(1 + args.tasks)
    design_rng = np.random.default_rng(design_seq)
    theta = abilities(args.models, args.tasks, args.correlation, args.twins, design_rng)
    source = duplicates_of(args.models, args.duplicates, design_rng)
    names = np.array([f"model-{m:05d}" for m in range(args.models)], dtype=object)
    example_ids = np.array([f"e{i:06d}" for i in range(args.examples)], dtype=object)
    files, rows = [], 0
    for t, task_seq in enumerate(task_seqs):
        task_rng = np.random.default_rng(task_seq)
        b = task_rng.normal(0, 1, args.examples)
        a = task_rng.lognormal(0, 0.3, args.examples)
        continuous = t >= args.tasks - args.continuous
        metric = "squad_f1" if continuous else "accuracy"
        block_seqs = task_seq.spawn((args.models + args.block - 1) // args.block)
        path = out / f"task{t}.parquet"
        schema = pa.schema(
            [
                ("model", pa.dictionary(pa.int32(), pa.string())),
                ("task", pa.dictionary(pa.int8(), pa.string())),
                ("language", pa.dictionary(pa.int8(), pa.string())),
                ("seed", pa.int64()),
                ("example_id", pa.dictionary(pa.int32(), pa.string())),
                ("metric", pa.dictionary(pa.int8(), pa.string())),
                ("score", pa.float64()),
            ]
        )
        scores_of: dict[int, np.ndarray] = {}  # originals that later blocks re-upload
        needed = set(source[source != np.arange(args.models)].tolist())
        with pq.ParquetWriter(path, schema, compression="zstd") as writer:
            for block, block_seq in enumerate(block_seqs):
                models = np.arange(block * args.block, min((block + 1) * args.block, args.models))
                scores = outcomes(
                    theta[models, t], a, b, continuous, np.random.default_rng(block_seq)
                )
                for i, m in enumerate(models):
                    if source[m] != m:
                        scores[i] = scores_of[int(source[m])]
                    if int(m) in needed:
                        scores_of[int(m)] = scores[i].copy()
                n = scores.size
                table = pa.table(
                    {
                        "model": pa.DictionaryArray.from_arrays(
                            pa.array(np.repeat(np.arange(len(models)), args.examples), pa.int32()),
                            pa.array(names[models].tolist(), pa.string()),
                        ),
                        "task": pa.DictionaryArray.from_arrays(
                            pa.array(np.zeros(n, np.int8)), pa.array([f"task{t}"])
                        ),
                        "language": pa.DictionaryArray.from_arrays(
                            pa.array(np.zeros(n, np.int8)), pa.array([args.language])
                        ),
                        "seed": pa.array(np.zeros(n, np.int64)),
                        "example_id": pa.DictionaryArray.from_arrays(
                            pa.array(
                                np.tile(np.arange(args.examples, dtype=np.int32), len(models))
                            ),
                            pa.array(example_ids.tolist(), pa.string()),
                        ),
                        "metric": pa.DictionaryArray.from_arrays(
                            pa.array(np.zeros(n, np.int8)), pa.array([metric])
                        ),
                        "score": pa.array(scores.ravel()),
                    },
                    schema=schema,
                )
                writer.write_table(table)
                rows += n
        files.append(str(path))
    return {
        "files": files,
        "rows": rows,
        "models": args.models,
        "tasks": args.tasks,
        "examples": args.examples,
        "duplicated_models": int((source != np.arange(args.models)).sum()),
        "seed": args.seed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", required=True, help="folder for task<t>.parquet")
    parser.add_argument("--models", type=int, default=5000)
    parser.add_argument("--tasks", type=int, default=6)
    parser.add_argument("--examples", type=int, default=10_000)
    parser.add_argument("--continuous", type=int, default=2, help="tasks scored by squad_f1")
    parser.add_argument("--correlation", type=float, default=0.8)
    parser.add_argument("--duplicates", type=float, default=0.02)
    parser.add_argument("--twins", type=float, default=0.02)
    parser.add_argument("--language", default="en")
    parser.add_argument("--block", type=int, default=50, help="models per row group")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if not 0 <= args.continuous <= args.tasks:
        parser.error("--continuous must be between 0 and --tasks")
    start = time.perf_counter()
    summary = generate(args)
    summary["seconds"] = round(time.perf_counter() - start, 2)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
