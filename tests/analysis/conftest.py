"""Shared helpers for the replication-aware analysis tests: simulated designs, stores, the CLI."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from glotbench.analysis.replicates import ReplicatedScores, Unit
from glotbench.store import RunRecord, Store


def simulate(
    rng: np.random.Generator,
    mu: Sequence[float],
    *,
    tau: float,
    sigma_seed: float,
    sigma_boot: float,
    n_languages: int,
    n_seeds: int,
    n_reps: int,
    shared_languages: bool = True,
) -> np.ndarray:
    """Scores x[m, l, s, b] = mu_m + a_l + e_mls + u_mlsb with known SDs.

    a_l ~ N(0, tau²) (one draw per language, shared by all models unless
    ``shared_languages`` is False), e ~ N(0, sigma_seed²), u ~ N(0, sigma_boot²).
    """
    n_models = len(mu)
    a_shape = (1, n_languages) if shared_languages else (n_models, n_languages)
    a = rng.normal(0.0, tau, size=a_shape)
    e = rng.normal(0.0, sigma_seed, size=(n_models, n_languages, n_seeds))
    u = rng.normal(0.0, sigma_boot, size=(n_models, n_languages, n_seeds, n_reps))
    return np.asarray(mu, dtype=float)[:, None, None, None] + a[..., None, None] + e[..., None] + u


def language_names(n: int) -> tuple[str, ...]:
    return tuple(f"l{i:03d}" for i in range(n))


def replicated(
    values: np.ndarray,
    models: Sequence[str] | None = None,
    languages: Sequence[str] | None = None,
    task: str = "task",
) -> ReplicatedScores:
    """A ReplicatedScores of one task from a (M, L, S, B) array."""
    n_models, n_languages = values.shape[:2]
    models = tuple(models or (f"m{i}" for i in range(n_models)))
    languages = tuple(languages or language_names(n_languages))
    units = tuple(Unit(task, lang) for lang in languages)
    source = "replicates" if values.shape[3] > 1 else "seeds"
    return ReplicatedScores(tuple(models), units, values, source)  # type: ignore[arg-type]


def long_frame(
    values: np.ndarray,
    models: Sequence[str] | None = None,
    languages: Sequence[str] | None = None,
    task: str | None = None,
) -> pd.DataFrame:
    """Tidy rows model, [task,] language, seed, replicate, score of the non-NaN values."""
    n_models, n_languages = values.shape[:2]
    models = list(models or (f"m{i}" for i in range(n_models)))
    languages = list(languages or language_names(n_languages))
    m, lang, s, b = np.nonzero(~np.isnan(values))
    frame = pd.DataFrame(
        {
            "model": np.asarray(models, dtype=object)[m],
            "language": np.asarray(languages, dtype=object)[lang],
            "seed": s,
            "replicate": b,
            "score": values[m, lang, s, b],
        }
    )
    if task is not None:
        frame.insert(1, "task", task)
    return frame


def accuracy_record(model: str, language: str, seed: int, task: str = "xnli") -> RunRecord:
    return RunRecord(
        model=model,
        task=task,
        language=language,
        seed=seed,
        metric="accuracy",
        stat_names=("value", "count"),
    )


def write_accuracy_runs(
    path: Path, correct: Mapping[tuple[str, str, int], np.ndarray], task: str = "xnli"
) -> Path:
    """A store holding one accuracy run per (model, language, seed): stats (value, 1)."""
    with Store.open(path) as store:
        for (model, language, seed), values in correct.items():
            values = np.asarray(values, dtype=float)
            ids = [f"{language}-{i}" for i in range(values.size)]
            stats = np.column_stack([values, np.ones_like(values)])
            assert store.runs.write(accuracy_record(model, language, seed, task), ids, stats)
    return path
