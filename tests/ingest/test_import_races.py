"""Racing imports into one store, in real processes (issue 24, item 1).

Two processes import into the same (new) store at the same moment — the same
file twice, or two files with the same keys and different values — for every
import kind (scores CSV and JSONL, examples, a Parquet snapshot, lm-eval,
EuroEval). Each must end as one import and one clear outcome for the other
("already imported" for the same file, a refusal naming the stored value for
a conflicting one), and the store must hold exactly what the winner alone
would have written: no key twice, never both of two values, no unfinished
``imports`` row.

The racers are long-lived subprocesses (``python -c RACER``) that import
glotbench once and then run one import per round when told "go" on stdin,
so a round costs an import, not an interpreter start. ``glotbench import``
itself is raced as two ``python -m glotbench`` processes in the slow test.
Figures of the slow test are in ``docs/reliability.md``.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from glotbench import api
from glotbench.store import Store

from ..store.conftest import examples_frame

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
FIXTURES = ROOT / "tests" / "fixtures" / "importers"
LM_EVAL_OUT = FIXTURES / "lm_eval_out"
EUROEVAL = FIXTURES / "euroeval" / "euroeval_benchmark_results.jsonl"
LM_EVAL_OPTIONS: dict[str, Any] = {
    "families": ["tinymt"],
    "task_map": ["tinyboolq=tinyboolq:en"],
}

#: runs one import per command line ({"kind", "path", "store", "delay"}) after a "go" line
RACER = r"""
import json, sys, time, traceback
from glotbench import api
from glotbench.errors import GlotbenchError, InputError
LM = {"families": ["tinymt"], "task_map": ["tinyboolq=tinyboolq:en"]}
print("started", flush=True)
for line in sys.stdin:
    cmd = json.loads(line)
    print("ready", flush=True)
    if sys.stdin.readline().strip() != "go":
        break
    time.sleep(cmd["delay"])
    kind, path, store = cmd["kind"], cmd["path"], cmd["store"]
    try:
        if kind in ("scores_csv", "scores_jsonl"):
            r = api.import_scores(path, store=store)
        elif kind == "examples":
            r = api.import_examples(path, store=store)
        elif kind == "parquet":
            r = api.import_parquet(path, store=store)
        elif kind == "lm_eval":
            r = api.import_lm_eval(path, store=store, **LM)
        else:
            r = api.import_euroeval(path, store=store)
        out = {"outcome": r.status, "message": r.message}
    except GlotbenchError as exc:
        out = {"outcome": "refused", "input_error": isinstance(exc, InputError),
               "message": str(exc)}
    except BaseException as exc:
        out = {"outcome": "crashed", "message": traceback.format_exc()}
    print(json.dumps(out), flush=True)
"""

KINDS = ("scores_csv", "scores_jsonl", "examples", "parquet", "lm_eval", "euroeval")


# ---------------------------------------------------------------------------
# inputs: for each kind a file ("a") and one with the same keys, other values ("b")
# ---------------------------------------------------------------------------
def _scores(flip: bool) -> pd.DataFrame:
    rows = []
    for m in range(4):
        for lang in ("de", "fr", "sw"):
            x = 0.1 + 0.2 * m + 0.01 * len(lang)
            rows.append(
                {
                    "model": f"m{m}",
                    "task": "xnli",
                    "language": lang,
                    "metric": "accuracy",
                    "score": 1 - x if flip else x,
                    "n": 500,
                }
            )
    return pd.DataFrame(rows)


def _lm_eval_variant(dst: Path) -> Path:
    """The lm-eval fixture's results (no samples) with every xnli_de accuracy moved by 0.1."""
    shutil.copytree(LM_EVAL_OUT, dst, ignore=shutil.ignore_patterns("samples_*"))
    for results in dst.glob("*/results_*.json"):
        data = json.loads(results.read_text())
        data["results"]["xnli_de"]["acc,none"] += 0.1
        results.write_text(json.dumps(data))
    return dst


def _euroeval_variant(dst: Path) -> Path:
    """The EuroEval fixture with the first record's totals and iterations moved."""
    lines = [line for line in EUROEVAL.read_text().splitlines() if line.strip()]
    first = json.loads(lines[0])
    first["results"]["raw"] = [{k: v * 0.9 for k, v in r.items()} for r in first["results"]["raw"]]
    first["results"]["total"] = {
        k: v * 0.9 if isinstance(v, float) else v for k, v in first["results"]["total"].items()
    }
    dst.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    return dst


def _snapshot(folder: Path, scores: Path, examples: Path) -> Path:
    store = folder / "src.duckdb"
    api.import_scores(scores, store=store)
    api.import_examples(examples, store=store)
    out = folder / "snapshot"
    api.export_store(out, store=store)
    return out


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    """kind -> (file a, file b with a's keys and other values)."""
    d = tmp_path_factory.mktemp("race-inputs")
    out: dict[str, tuple[Path, Path]] = {}
    for name, flip in (("a", False), ("b", True)):
        _scores(flip).to_csv(d / f"{name}.csv", index=False)
        _scores(flip).to_json(d / f"{name}.jsonl", orient="records", lines=True)
        examples_frame(models=("a", "b", "c"), n=20, seed=int(flip)).to_csv(
            d / f"ex_{name}.csv", index=False
        )
    out["scores_csv"] = (d / "a.csv", d / "b.csv")
    out["scores_jsonl"] = (d / "a.jsonl", d / "b.jsonl")
    out["examples"] = (d / "ex_a.csv", d / "ex_b.csv")
    snaps = []
    for name in ("a", "b"):
        (d / f"snap-{name}").mkdir()
        snaps.append(_snapshot(d / f"snap-{name}", d / f"{name}.csv", d / f"ex_{name}.csv"))
    out["parquet"] = (snaps[0], snaps[1])
    out["lm_eval"] = (LM_EVAL_OUT, _lm_eval_variant(d / "lm_eval_b"))
    out["euroeval"] = (EUROEVAL, _euroeval_variant(d / "euroeval_b.jsonl"))
    return out


def _import(kind: str, path: Path, store: Path) -> None:
    if kind in ("scores_csv", "scores_jsonl"):
        api.import_scores(path, store=store)
    elif kind == "examples":
        api.import_examples(path, store=store)
    elif kind == "parquet":
        api.import_parquet(path, store=store)
    elif kind == "lm_eval":
        api.import_lm_eval(path, store=store, **LM_EVAL_OPTIONS)
    else:
        api.import_euroeval(path, store=store)


def signature(store: Path) -> dict[str, Any]:
    """What a store holds, without import ids and times: scores, runs, imports."""
    with Store.open(store, read_only=True) as s:
        con = s.connection
        scores = con.execute(
            "SELECT model, task, language, dataset, metric, seed, replicate, score, stderr, n "
            "FROM scores ORDER BY ALL"
        ).fetchall()
        keys = con.execute(
            "SELECT count(*), count(DISTINCT (model, task, language, dataset, metric, seed, "
            "replicate)) FROM scores"
        ).fetchone()
        runs = con.execute("SELECT run_id, stats_sha256 FROM runs ORDER BY ALL").fetchall()
        examples = con.execute("SELECT count(*) FROM example_stats").fetchone()
        imports = con.execute(
            "SELECT kind, sha256, completed_at IS NOT NULL FROM imports ORDER BY ALL"
        ).fetchall()
    assert keys is not None and examples is not None
    return {
        "scores": scores,
        "score_rows_and_keys": tuple(keys),
        "runs": runs,
        "examples": examples[0],
        "imports": imports,
    }


@pytest.fixture(scope="module")
def references(
    inputs: dict[str, tuple[Path, Path]], tmp_path_factory: pytest.TempPathFactory
) -> dict[tuple[str, int], dict[str, Any]]:
    """(kind, 0 for a / 1 for b) -> the signature of a store holding that one import."""
    d = tmp_path_factory.mktemp("race-refs")
    out = {}
    for kind, files in inputs.items():
        for i, path in enumerate(files):
            store = d / f"{kind}-{i}.duckdb"
            _import(kind, path, store)
            out[(kind, i)] = signature(store)
            rows, keys = out[(kind, i)]["score_rows_and_keys"]
            assert rows == keys and all(done for *_, done in out[(kind, i)]["imports"])
    return out


# ---------------------------------------------------------------------------
# the racers
# ---------------------------------------------------------------------------
class Racer:
    """A subprocess that runs one import per round, at the parent's "go"."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", RACER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "PYTHONPATH": str(SRC), "GLOTBENCH_LOCK_TIMEOUT": "120"},
        )
        assert self._line() == "started"

    def _line(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"racer exited with {self.proc.wait()}")
        return line.strip()

    def send(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()

    def prepare(self, kind: str, path: Path, store: Path, delay: float) -> None:
        self.send(
            json.dumps({"kind": kind, "path": str(path), "store": str(store), "delay": delay})
        )
        assert self._line() == "ready"

    def result(self) -> dict[str, Any]:
        return json.loads(self._line())

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture(scope="module")
def racers() -> Iterator[tuple[Racer, Racer]]:
    pair = (Racer(), Racer())
    yield pair
    for r in pair:
        r.close()


def race(
    racers: tuple[Racer, Racer],
    kind: str,
    files: tuple[Path, Path],
    store: Path,
    delays: tuple[float, float],
) -> list[dict[str, Any]]:
    """Start both imports at the same moment (each after its delay); their outcomes."""
    for racer, path, delay in zip(racers, files, delays, strict=True):
        racer.prepare(kind, path, store, delay)
    for racer in racers:
        racer.send("go")
    return [racer.result() for racer in racers]


def check_round(
    kind: str,
    conflicting: bool,
    order: tuple[int, int],
    files: tuple[Path, Path],
    outcomes: list[dict[str, Any]],
    store: Path,
    references: dict[tuple[str, int], dict[str, Any]],
) -> int:
    """Assert one import and one clear other outcome; the winner's file index."""
    for o in outcomes:
        assert o["outcome"] != "crashed", o["message"]
    winners = [i for i, o in enumerate(outcomes) if o["outcome"] == "imported"]
    assert len(winners) == 1, outcomes
    (w,) = winners
    loser = outcomes[1 - w]
    if conflicting:
        assert loser["outcome"] == "refused", outcomes
        assert loser["input_error"], loser  # by file, line and field
        assert "already stored" in loser["message"], loser
        assert files[1 - w].name in loser["message"], loser  # names the refused input
    else:
        assert loser["outcome"] == "skipped", outcomes
        assert "already imported" in loser["message"], loser
    got = signature(store)
    rows, keys = got["score_rows_and_keys"]
    assert rows == keys, f"{kind}: {rows - keys} key(s) stored twice"
    assert all(done for *_, done in got["imports"]), f"{kind}: an unfinished imports row"
    assert got == references[(kind, order[w])], f"{kind}: the store is not the winner's alone"
    return order[w]


def run_rounds(
    racers: tuple[Racer, Racer],
    inputs: dict[str, tuple[Path, Path]],
    references: dict[tuple[str, int], dict[str, Any]],
    tmp: Path,
    kinds: tuple[str, ...],
    rounds: int,
    seed: int = 0,
) -> Counter[str]:
    """``rounds`` races per kind and mode (same file / conflicting files), both orders."""
    rng = random.Random(seed)
    tally: Counter[str] = Counter()
    for kind in kinds:
        for conflicting in (False, True):
            for r in range(rounds):
                order = (r % 2, 1 - r % 2) if conflicting else (0, 0)
                files = (inputs[kind][order[0]], inputs[kind][order[1]])
                delays = (0.0, rng.choice([0.0, 0.0, 0.005, 0.02, 0.05]))
                if r % 2:  # the second racer may go first
                    delays = delays[::-1]
                store = tmp / f"{kind}-{int(conflicting)}-{r}.duckdb"
                outcomes = race(racers, kind, files, store, delays)
                winner = check_round(kind, conflicting, order, files, outcomes, store, references)
                tally["rounds"] += 1
                tally["refused" if conflicting else "skipped"] += 1
                tally[f"won_by_{'a' if winner == 0 else 'b'}"] += conflicting
                tally[f"first_racer_won_{outcomes[0]['outcome'] == 'imported'}"] += 1
                store.unlink()
                assert not Path(str(store) + ".writer.lock").exists()
    return tally


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_racing_imports_end_as_one_import_and_one_clear_outcome(
    kind: str,
    racers: tuple[Racer, Racer],
    inputs: dict[str, tuple[Path, Path]],
    references: dict[tuple[str, int], dict[str, Any]],
    tmp_path: Path,
) -> None:
    tally = run_rounds(racers, inputs, references, tmp_path, (kind,), rounds=1)
    assert tally["rounds"] == 2 and tally["won_by_a"] + tally["won_by_b"] == 1


@pytest.mark.slow
def test_many_racing_imports_of_every_kind_both_orders(
    racers: tuple[Racer, Racer],
    inputs: dict[str, tuple[Path, Path]],
    references: dict[tuple[str, int], dict[str, Any]],
    tmp_path: Path,
) -> None:
    t0 = time.perf_counter()
    tally = run_rounds(racers, inputs, references, tmp_path, KINDS, rounds=4, seed=24)
    assert tally["rounds"] == len(KINDS) * 2 * 4
    # both files won some conflicting races, and both racers won some (both orders happened)
    assert tally["won_by_a"] and tally["won_by_b"], tally
    assert tally["first_racer_won_True"] and tally["first_racer_won_False"], tally
    print(f"\nimport races: {dict(tally)} in {time.perf_counter() - t0:.0f} s")


@pytest.mark.slow
def test_racing_glotbench_import_commands(inputs: dict[str, tuple[Path, Path]], tmp_path: Path):
    """The issue's reproduction: two ``glotbench import scores`` at once, same and conflicting."""
    env = {**os.environ, "PYTHONPATH": str(SRC), "GLOTBENCH_LOCK_TIMEOUT": "120"}
    a, b = inputs["scores_csv"]
    for name, files in (("same", (a, a)), ("conflict", (a, b))):
        store = tmp_path / f"{name}.duckdb"
        procs = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "glotbench",
                    "import",
                    "scores",
                    str(f),
                    "--store",
                    str(store),
                    "--json",
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
            )
            for f in files
        ]
        done = [p.communicate(timeout=120) for p in procs]
        codes = sorted(p.returncode for p in procs)
        with Store.open(store, read_only=True) as s:
            assert len(s.scores.frame()) == 12
            assert s.summary().counts["incomplete_imports"] == 0
            assert s.summary().counts["imports"] == 1
        if name == "same":
            assert codes == [0, 0], done
            statuses = sorted(json.loads(out)["status"] for out, _ in done)
            assert statuses == ["imported", "skipped"]
        else:
            assert codes[0] == 0 and codes[1] != 0, done
            err = next(e for (_, e), p in zip(done, procs, strict=True) if p.returncode)
            assert "already stored with score" in err and "line" in err, err


#: imports argv[1] into argv[2] (as the CLI opens it), pausing for a minute before batch 3
PAUSING_IMPORT = r"""
import sys, time
from glotbench.store import scores as scores_module
from glotbench.ingest.tidy import import_scores_file, open_store_for_import
original = scores_module.Scores.add_batch
calls = {"n": 0}

def pausing(self, frame, import_id, **kwargs):
    calls["n"] += 1
    if calls["n"] == 3:  # two batches committed; the import is live and unfinished
        print("paused", flush=True)
        time.sleep(60)
    return original(self, frame, import_id, **kwargs)

scores_module.Scores.add_batch = pausing
with open_store_for_import(sys.argv[2]) as s:
    import_scores_file(s, sys.argv[1], chunk_rows=50, batch_rows=40)
"""

#: imports argv[1] into argv[2] and prints the status
PLAIN_IMPORT = r"""
import sys
from glotbench.ingest.tidy import import_scores_file, open_store_for_import
with open_store_for_import(sys.argv[2]) as s:
    print(import_scores_file(s, sys.argv[1]).status, flush=True)
"""


@pytest.mark.slow
def test_a_live_import_is_waited_for_never_resumed_and_a_killed_one_is_resumed(
    tmp_path: Path, cli: Any
) -> None:
    frame = pd.DataFrame(
        {
            "model": [f"m{i % 20}" for i in range(200)],
            "task": "xnli",
            "language": [f"l{i // 20}" for i in range(200)],
            "metric": "accuracy",
            "score": [(i % 97) / 97 for i in range(200)],
        }
    )
    path = tmp_path / "s.csv"
    frame.to_csv(path, index=False)
    store = tmp_path / "s.duckdb"
    env = {**os.environ, "PYTHONPATH": str(SRC), "GLOTBENCH_LOCK_TIMEOUT": "60"}
    first = subprocess.Popen(
        [sys.executable, "-c", PAUSING_IMPORT, str(path), str(store)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    second = None
    try:
        assert first.stdout is not None and first.stdout.readline().strip() == "paused"
        with Store.open(store, read_only=True) as s:  # readers are not locked out
            summary = s.summary()
        assert (summary.counts["scores"], summary.counts["incomplete_imports"]) == (80, 1)
        (item,) = summary.incomplete_imports
        assert item["running"]["pid"] == first.pid  # in progress, not interrupted
        shown = cli("show", "--store", store)
        assert f"import in progress {item['import_id']}" in shown.out
        assert f"by process {first.pid}" in shown.out and "interrupted" not in shown.out
        second = subprocess.Popen(
            [sys.executable, "-c", PLAIN_IMPORT, str(path), str(store)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert second.stderr is not None
        notice = second.stderr.readline()  # after a second of waiting for the writer lock
        assert f"waiting for process {first.pid}" in notice, notice
        assert second.poll() is None  # waiting for the live import, not "resuming" it
        with Store.open(store, read_only=True) as s:
            assert s.summary().counts["scores"] == 80
        first.kill()  # SIGKILL: the OS releases its writer lock
        first.wait(timeout=10)
        out, err = second.communicate(timeout=60)
        assert second.returncode == 0, err
        assert out.strip() == "resumed"  # its process died: now it is an interrupted import
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
    got = signature(store)
    assert got["score_rows_and_keys"] == (200, 200)
    assert got["imports"] == [("scores", got["imports"][0][1], True)]
    assert sorted(s[7] for s in got["scores"]) == sorted(frame["score"])


@pytest.mark.slow
def test_a_failing_import_never_removes_a_store_another_import_uses(
    racers: tuple[Racer, Racer], tmp_path: Path
) -> None:
    """A failed import removes the new, empty store it created; a racing import that had
    opened it meanwhile used to write into an empty file without tables (Catalog Error)
    and left "not a glotbench store" behind. Now the store is created again on its next use."""
    n = 20_000
    good = tmp_path / "good.csv"
    pd.DataFrame(
        {
            "model": [f"m{i % 100}" for i in range(n)],
            "task": "xnli",
            "language": [f"l{i // 100}" for i in range(n)],
            "metric": "accuracy",
            "score": 0.5,
        }
    ).to_csv(good, index=False)
    bad = tmp_path / "bad.csv"
    bad.write_text("model,task,language,metric,score\nm,xnli,de,accuracy,7\n")
    for r, delay in enumerate((0.0, 0.03, 0.1)):
        store = tmp_path / f"s{r}.duckdb"
        outcomes = race(racers, "scores_csv", (bad, good), store, (0.0, delay))
        assert outcomes[0]["outcome"] == "refused" and outcomes[0]["input_error"], outcomes
        assert outcomes[1]["outcome"] == "imported", outcomes
        got = signature(store)
        assert got["score_rows_and_keys"] == (n, n)
        assert [done for *_, done in got["imports"]] == [True]
