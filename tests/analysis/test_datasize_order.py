"""SEQ and RAND_SEQ from the store follow the source's order (``source_position``).

1. Simulation with known truth: three systems whose ranking reverses in the
   last quarter of the document. Stored in a shuffled order with source
   positions, SEQ must see only the last quarter (τ = −1 exactly) and
   RAND_SEQ must match the exact expectation over its start positions
   (computed here with scipy); without positions the analysis falls back to
   the stored order and says so.
2. Real data: ``glotbench run`` on a UD treebank (shuffled test split); the
   stored source positions equal the sentence indices of the CoNLL-U file read
   here independently, and the SEQ draw is exactly the test sentences that
   come last in the file.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import weightedtau

from glotbench import api
from glotbench.analysis.datasize import subset_masks
from glotbench.analysis.sources.datasize_store import datasize_inputs_from_store
from glotbench.store import RunRecord, Store

SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
DDT = SHARED_DATA / "ud" / "UD_Danish-DDT" / "da_ddt-ud-test.conllu"

# --- 1. simulation with a known order effect --------------------------------------

N, LATE, WORDS = 400, 300, 10  # sentences; the last quarter starts at 300; words each
CORRECT = {"A": (9, 6), "B": (8, 7), "C": (7, 8)}  # correct words (early, late)


def _correct(model: str) -> np.ndarray:
    early, late = CORRECT[model]
    return np.where(np.arange(N) < LATE, early, late).astype(float)


def _simulated_store(path: Path, *, with_positions: bool) -> Path:
    order = np.random.default_rng(11).permutation(N)  # the stored (shuffled) order
    with Store.open(path) as store:
        for model in CORRECT:
            stats = np.column_stack([_correct(model), np.full(N, WORDS)])[order]
            record = RunRecord(
                model=model, dataset="doc", task="pos", language="xx", seed=1,
                metric="token_accuracy", stat_names=("correct", "tokens"),
            )  # fmt: skip
            store.runs.write(
                record, [f"s{i:03d}" for i in order], stats,
                source_positions=order if with_positions else None,
            )  # fmt: skip
    return path


def _analyze(store: Path) -> api.DataSizeResult:
    return api.analyze_datasize(
        store=store, dataset="doc", task="pos", language="xx", metric="token_accuracy",
        sizes=(100, 500, 1000, None), n_draws=400, seed=3, aso=False,
    )  # fmt: skip


def _tau(result: api.DataSizeResult, strategy: str, size: str) -> float:
    table = result.table
    row = table[(table["strategy"] == strategy) & (table["size"] == size)]
    return float(row[row["unit"] == "model"]["tau_mean"].item())


def _exact_rand_seq_tau(size_words: int) -> float:
    """E[τ] of RAND_SEQ in the source order: uniform start among those leaving ≥ size words."""
    full = np.array([_correct(m).sum() for m in CORRECT]) / (N * WORDS)
    count = size_words // WORDS
    taus = []
    for start in range(N - count + 1):
        sub = np.array([_correct(m)[start : start + count].sum() for m in CORRECT])
        taus.append(weightedtau(sub, full).statistic)
    taus_arr = np.asarray(taus)
    return float(taus_arr[np.isfinite(taus_arr)].mean())  # a tie of all three has no τ


def test_seq_follows_source_positions_in_a_shuffled_store(tmp_path: Path) -> None:
    result = _analyze(_simulated_store(tmp_path / "pos.duckdb", with_positions=True))
    assert result.order == "source_position" and result.to_dict()["order"] == "source_position"
    full = np.array([_correct(m).sum() for m in CORRECT]) / (N * WORDS)
    assert result.full_scores["score"].tolist() == pytest.approx(full.tolist())
    for size in ("100", "500", "1000"):
        # the last `size` words are all in the last quarter: the ranking is reversed
        sub = np.array([_correct(m)[N - int(size) // WORDS :].sum() for m in CORRECT])
        assert weightedtau(sub, full).statistic == pytest.approx(-1.0)
        assert _tau(result, "SEQ", size) == pytest.approx(-1.0, abs=1e-12)
    # RAND_SEQ: contiguous blocks; Monte Carlo mean (400 draws, τ in [-1, 1]) vs exact
    exact = _exact_rand_seq_tau(1000)
    assert 0.2 < exact < 0.8
    assert _tau(result, "RAND_SEQ", "1000") == pytest.approx(exact, abs=0.15)  # ~4 SE
    # RAND (order-free): a 100-sentence sample keeps the full ranking
    assert _tau(result, "RAND", "1000") > 0.95
    assert not any("no source positions" in n for n in result.notes)


def test_without_source_positions_the_stored_order_is_used_and_said(tmp_path: Path) -> None:
    result = _analyze(_simulated_store(tmp_path / "nopos.duckdb", with_positions=False))
    assert result.order == "stored"
    assert any("no source positions" in n and "random samples" in n for n in result.notes)
    # the stored order is shuffled, so the 'last 1,000 words' are a random sample of
    # sentences (about a quarter of them late): the full ranking A > B > C is kept
    assert _tau(result, "SEQ", "1000") == pytest.approx(1.0)
    assert _tau(result, "RAND_SEQ", "1000") > 0.95


def test_runs_that_disagree_on_positions_are_an_error(tmp_path: Path) -> None:
    path = _simulated_store(tmp_path / "pos.duckdb", with_positions=True)
    con = Store.open(path)
    try:
        con.connection.execute(
            "UPDATE example_stats SET source_position = source_position + 1000 WHERE run_id = "
            "(SELECT run_id FROM runs WHERE model = 'B')"
        )
    finally:
        con.close()
    with pytest.raises(api.InputError, match="runs disagree on the source position"):
        _analyze(path)


# --- 2. glotbench run on UD data ---------------------------------------------------


def _file_order(path: Path) -> dict[str, int]:
    """Record id (``<stem>#<sent_id>``) -> sentence index, read line by line (no glotbench)."""
    index: dict[str, int] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# sent_id"):
            sent_id = line.split("=", 1)[1].strip()
            index[f"{path.stem}#{sent_id}"] = len(index)
    return index


@pytest.mark.slow
def test_runner_store_seq_is_the_last_test_sentences_of_the_file(tmp_path: Path) -> None:
    if not DDT.exists():
        pytest.skip(f"the shared UD data is not at {SHARED_DATA} (../shared/data)")
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        """name: order-test
needs_data_dir: true
protocol: {iterations: 1, seed: 5, bootstrap_train: false, speed_iterations: 0}
datasets:
  - name: pos-da
    task: pos
    language: da
    loader: conllu
    paths: ["ud/UD_Danish-DDT/da_ddt-ud-test.conllu"]
    splits: {train: 150, validation: 0, test: 200}
models:
  - {name: word, kind: tagger, options: {features: [word]}}
  - {name: affix, kind: tagger, options: {features: [word, affix]}}
  - {name: full, kind: tagger, options: {features: [word, affix, shape, context]}}
""",
        encoding="utf-8",
    )
    store = tmp_path / "run.duckdb"
    summary = api.run_benchmark(suite, store=store, data_dir=SHARED_DATA)
    assert not summary.to_dict().get("failed")

    file_index = _file_order(DDT)
    with Store.open(store, read_only=True) as handle:
        frame = handle.stats.examples(metrics="token_accuracy")
        inputs = datasize_inputs_from_store(handle, "pos-da", "pos", "da", "token_accuracy")
    # every stored example carries its sentence index in the file ...
    expected = frame["example_id"].map(file_index)
    assert expected.notna().all()
    assert frame["source_position"].astype(int).tolist() == expected.astype(int).tolist()
    # ... while the stored (evaluation) order is the shuffled test split
    one_run = frame[frame["model"] == "word"].sort_values("position")
    assert not one_run["source_position"].is_monotonic_increasing

    # the analysis input is in file order
    assert inputs.order == "source_position"
    test_ids = sorted(one_run["example_id"], key=file_index.__getitem__)
    assert inputs.example_ids.tolist() == test_ids
    assert any("sample of a larger source" in n for n in inputs.notes)

    # SEQ of 500 words = the test sentences that come last in the file, counted here
    words = dict(zip(one_run["example_id"], one_run["stats"].map(lambda s: s[1]), strict=True))
    chosen, total = [], 0.0
    for eid in reversed(test_ids):
        chosen.append(eid)
        total += words[eid]
        if total >= 500:
            break
    mask = subset_masks(inputs.tokens, 500, "SEQ", 1, 0)[0]
    assert set(inputs.example_ids[mask == 1]) == set(chosen)
    # RAND_SEQ draws are runs of consecutive test sentences in the file's order
    for row in subset_masks(inputs.tokens, 500, "RAND_SEQ", 20, 0):
        picked = np.flatnonzero(row)
        assert np.all(np.diff(picked) == 1)

    # and the analysis scores exactly that subset: τ against an independent computation
    result = api.analyze_datasize(
        store=store, dataset="pos-da", task="pos", language="da", metric="token_accuracy",
        sizes=(500, None), strategies=("SEQ",), aso=False,
    )  # fmt: skip
    runs = frame.groupby("model")
    full, sub = [], []
    for model in result.models:
        stats = runs.get_group(model).set_index("example_id")["stats"]
        full.append(sum(s[0] for s in stats) / sum(s[1] for s in stats))
        sub.append(sum(stats[e][0] for e in chosen) / sum(stats[e][1] for e in chosen))
    row = result.table[(result.table["size"] == "500") & (result.table["unit"] == "model")]
    assert row["tau_mean"].item() == pytest.approx(weightedtau(sub, full).statistic, abs=1e-12)
    payload = json.loads(json.dumps(result.to_dict()))
    assert payload["order"] == "source_position"
