"""Runner overhead per example against the model's own inference time.

    PYTHONPATH=src python benchmarks/bench_runner.py                  # ~1 minute on 2 cores
    PYTHONPATH=src python benchmarks/bench_runner.py --n-test 8192 --iterations 2

A generated text-classification dataset (task ``classification``: MCC and
macro-F1, two runs per job; the six labels are language codes and the texts
6–18 common words of that language; ``--n-train`` / ``--n-val`` / ``--n-test``
examples) is evaluated by models of very different speed:

* ``majority``      the scikit-learn-free majority baseline (inference ≈ 0);
* ``tfidf-logreg``  TF-IDF word + char n-grams and logistic regression (trains per seed);
* ``sleep``         a ``callable`` model whose predict sleeps ``--sleep-ms`` per item;
* ``py3langid``     the pretrained identifier, through a ``callable`` factory
  (``predict(list[str])``); skipped when py3langid is not importable.

For each model the script runs the **full protocol path** of ``glotbench run``
as :func:`glotbench.runner.executors.run_suite` does it, step by step, and
times every step: load the suite, plan the jobs, build the datasets (read,
validate, split), hash them, open a fresh temporary DuckDB store, check which
runs are stored, then per job ``execute_job`` and ``write_outcome``, and
finally the ScandEval scores. Inside ``execute_job`` the model's fit and
predict times come from the run metadata; the metric statistics and the
speed test (``speed_repeats`` calls on the 2,600-character document) are
timed by wrapping ``Task.statistics`` and ``protocol.measure_speed``.

In the same process, the model's bare inference ``model.predict_labels(texts)``
on the same test texts is timed (the model fitted or loaded beforehand, not
timed). Everything is reported per evaluated example (iterations × test size):

    overhead          = runner wall per example − bare predict per example
    runner's own part = overhead − fit − speed test − model load per job

(A ``callable`` adapter is built afresh for every job and calls its factory
on first use, so a pretrained model is loaded once per job; that load is
timed by wrapping ``CallableModel._get`` and reported apart from predict.)

With ``--deterministic`` the callable models are marked ``deterministic:
true``: the runner then predicts (and loads the model) in the first job only
and reuses the predictions in the other iterations; the bare inference counted
against the runner is then one predict call, not one per job.

The minimum-total repeat of ``--repeats`` is reported (its breakdown), the
bare predict time is the minimum of ``--repeats`` timings. A ``run_suite``
call on the same suite is timed once per model as a check that the step-by-step
path is representative.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

# ---------------------------------------------------------------------------
# Callable models (imported by the runner as "bench_runner:<name>", also in Ray
# workers, so they must stay importable without side effects).

LANGUAGES = ("da", "de", "en", "nl", "no", "sv")


def sleep_predictor(ms_per_item: float = 0.5, label: str = "da") -> Callable[[list[str]], list]:
    """A model whose inference takes a fixed ``ms_per_item`` per item (one sleep per batch)."""

    def predict(texts: list[str]) -> list[str]:
        time.sleep(ms_per_item / 1000.0 * len(texts))
        return [label] * len(texts)

    return predict


def burn_predictor(rounds: int = 2000, labels: tuple[str, ...] = LANGUAGES) -> Callable:
    """A CPU-bound model: ``rounds`` chained SHA-256 per item; deterministic labels."""
    labels = tuple(labels)

    def predict(texts: list[str]) -> list[str]:
        out = []
        for text in texts:
            digest = text.encode("utf-8")
            for _ in range(rounds):
                digest = hashlib.sha256(digest).digest()
            out.append(labels[digest[0] % len(labels)])
        return out

    return predict


def langid_predictor(languages: list[str] | None = None) -> Callable[[list[str]], list]:
    """py3langid's pretrained model, restricted to ``languages``; loads the model each call."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    ident = LanguageIdentifier.from_model_file(MODEL_FILE)
    ident.set_languages(list(languages or LANGUAGES))

    def predict(texts: list[str]) -> list[str]:
        return [ident.classify(t)[0] for t in texts]

    return predict


def langid_available() -> bool:
    try:
        import py3langid  # noqa: F401
    except ImportError:
        return False
    return True


# ---------------------------------------------------------------------------
# Data and suites

WORDS = {
    "da": "jeg du han hun det vi de er var har ikke og i på med til for som af men der "
    "hvad hvor når meget godt kan skal vil være blive sige gå komme se huset bilen "
    "hunden byen dag år tid mand kvinde barn arbejde",
    "sv": "jag du han hon det vi de är var har inte och i på med till för som av men där "
    "vad var när mycket bra kan ska vill vara bli säga gå komma se huset bilen "
    "hunden staden dag år tid man kvinna barn arbete",
    "no": "jeg du han hun det vi de er var har ikke og i på med til for som av men der "
    "hva hvor når mye bra kan skal vil være bli si gå komme se huset bilen "
    "hunden byen dag år tid mann kvinne barn arbeid",
    "en": "i you he she it we they is was has not and in on with to for as of but there "
    "what where when very good can shall will be become say go come see the house car "
    "dog city day year time man woman child work",
    "de": "ich du er sie es wir sie ist war hat nicht und in auf mit zu für als von aber da "
    "was wo wenn sehr gut kann soll will sein werden sagen gehen kommen sehen das haus auto "
    "hund stadt tag jahr zeit mann frau kind arbeit",
    "nl": "ik jij hij zij het wij zij is was heeft niet en in op met naar voor als van maar daar "
    "wat waar wanneer zeer goed kan zal wil zijn worden zeggen gaan komen zien het huis auto "
    "hond stad dag jaar tijd man vrouw kind werk",
}


def write_dataset(path: Path, n: int, seed: int = 0) -> None:
    """``n`` records {id, text, label}: 6–18 words of one language's list, balanced labels."""
    rng = np.random.default_rng(seed)
    vocab = {lang: WORDS[lang].split() for lang in LANGUAGES}
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            lang = LANGUAGES[i % len(LANGUAGES)]
            words = rng.choice(vocab[lang], size=int(rng.integers(6, 19)))
            text = " ".join(words).capitalize() + "."
            fh.write(json.dumps({"id": f"x{i:06d}", "text": text, "label": lang}) + "\n")


MODEL_SPECS: dict[str, dict[str, Any]] = {
    "majority": {"name": "majority", "kind": "majority"},
    "tfidf-logreg": {"name": "tfidf-logreg", "kind": "tfidf-logreg"},
    "sleep": {
        "name": "sleep",
        "kind": "callable",
        "options": {"target": "bench_runner:sleep_predictor", "factory": True},
    },
    "py3langid": {
        "name": "py3langid",
        "kind": "callable",
        "options": {
            "target": "bench_runner:langid_predictor",
            "factory": True,
            "factory_kwargs": {"languages": list(LANGUAGES)},
        },
    },
    "burn": {
        "name": "burn",
        "kind": "callable",
        "options": {"target": "bench_runner:burn_predictor", "factory": True},
    },
}


def model_spec(name: str, **factory_kwargs: Any) -> dict[str, Any]:
    spec = json.loads(json.dumps(MODEL_SPECS[name]))
    if factory_kwargs:
        spec["options"].setdefault("factory_kwargs", {}).update(factory_kwargs)
    return spec


def write_suite(
    folder: Path,
    models: list[dict[str, Any]],
    *,
    sizes: dict[str, int],
    iterations: int,
    speed_repeats: int,
    name: str = "bench",
) -> Path:
    """A one-dataset suite over ``data.jsonl`` in ``folder``.

    Task ``classification`` (not ``language_id``, whose multilingual datasets
    store one run per language): every job stores two runs, MCC and macro-F1.
    """
    import yaml

    data = folder / "data.jsonl"
    if not data.exists():
        write_dataset(data, sum(sizes.values()))
    suite = {
        "name": name,
        "protocol": {"iterations": iterations, "speed_repeats": speed_repeats},
        "datasets": [
            {
                "name": "syn-6way",
                "task": "classification",
                "language": "xx",
                "loader": "jsonl",
                "paths": [data.name],
                "splits": dict(sizes),
            }
        ],
        "models": models,
    }
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False), encoding="utf-8")
    return path


# ---------------------------------------------------------------------------
# Timing probes


@contextmanager
def probe(owner: Any, attr: str, bucket: dict[str, float], key: str) -> Iterator[None]:
    """Wrap ``owner.attr`` so that its wall time accumulates in ``bucket[key]``."""
    if not hasattr(owner, attr):  # the runner changed; report n/a instead of failing
        bucket[key] = float("nan")
        yield
        return
    had_own = attr in vars(owner)
    original = vars(owner)[attr] if had_own else getattr(owner, attr)
    inner = getattr(owner, attr)
    bucket.setdefault(key, 0.0)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            bucket[key] += time.perf_counter() - start

    setattr(owner, attr, wrapper)
    try:
        yield
    finally:
        if had_own:
            setattr(owner, attr, original)
        else:
            delattr(owner, attr)


def _clear_prediction_cache() -> None:
    """Forget predictions of ``deterministic`` models kept from an earlier run here."""
    from glotbench.runner import protocol

    cache = getattr(protocol, "_PREDICTION_CACHE", None)
    if cache is not None:
        cache.clear()


def protocol_path(suite_path: Path, store_path: Path) -> dict[str, Any]:
    """``run_suite`` step by step (local executor), with the time of every step."""
    from glotbench.runner import protocol as P
    from glotbench.runner.executors import build_datasets
    from glotbench.runner.models import CallableModel
    from glotbench.runner.suite import load_suite
    from glotbench.runner.tasks import get_task
    from glotbench.store.store import Store

    _clear_prediction_cache()
    t: dict[str, float] = {}
    total0 = time.perf_counter()

    t0 = time.perf_counter()
    suite = load_suite(suite_path)
    jobs, _ = suite.jobs()
    t["suite load + plan"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    datasets = build_datasets(suite)
    t["dataset build"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    for ds in datasets.values():
        _ = ds.content_hash  # otherwise computed lazily by the first run_keys
    t["dataset hash"] = time.perf_counter() - t0

    inner: dict[str, float] = {}
    fit = predict = job_wall = write = 0.0
    n_examples = predicted_jobs = 0
    task_cls = type(get_task(next(iter(datasets.values())).task))
    with (
        probe(task_cls, "statistics", inner, "statistics"),
        probe(P, "measure_speed", inner, "speed test"),
        # a callable adapter calls its factory (loads the model) on first use, in predict
        probe(CallableModel, "_get", inner, "model load"),
    ):
        t0 = time.perf_counter()
        handle = Store.open(store_path)
        t["store open (new)"] = time.perf_counter() - t0
        try:
            t0 = time.perf_counter()
            complete = handle.runs.completed_ids()
            pending = [
                j
                for j in jobs
                if not all(k.run_id in complete for k in P.run_keys(j, datasets[j.dataset.name]))
            ]
            t["resume check"] = time.perf_counter() - t0
            for job in pending:
                dataset = datasets[job.dataset.name]
                t0 = time.perf_counter()
                outcome = P.execute_job(job, dataset, base=suite.base_dir)
                job_wall += time.perf_counter() - t0
                meta = outcome.runs[0][0].model_metadata
                fit += float(meta["fit_seconds"])
                # a `deterministic: true` model predicts once and reuses the predictions
                if meta.get("predictions_of_iteration", job.iteration) == job.iteration:
                    predict += float(meta["predict_seconds"])
                    predicted_jobs += 1
                n_examples += len(dataset.test)
                t0 = time.perf_counter()
                P.write_outcome(handle, outcome)
                write += time.perf_counter() - t0
            t0 = time.perf_counter()
            P.scandeval_scores(
                handle, models=sorted({j.model.name for j in jobs}), datasets=sorted(datasets)
            )
            t["ScandEval scores"] = time.perf_counter() - t0
        finally:
            t0 = time.perf_counter()
            handle.close()
            t["store close"] = time.perf_counter() - t0
    total = time.perf_counter() - total0
    t["fit (model)"] = fit
    t["model load (in predict, per job)"] = inner.get("model load", 0.0)
    t["predict (in runner, excl. load)"] = predict - t["model load (in predict, per job)"]
    t["statistics"] = inner.get("statistics", float("nan"))
    t["speed test (model calls)"] = inner.get("speed test", float("nan"))
    t["job: other (task, adapter, seeding, records)"] = (
        job_wall - fit - predict - t["statistics"] - t["speed test (model calls)"]
    )
    t["store write (write_outcome)"] = write
    return {
        "total": total,
        "steps": t,
        "jobs": len(pending),
        "predicted_jobs": predicted_jobs,
        "examples": n_examples,
    }


def bare_inference(spec: dict[str, Any], suite_path: Path, repeats: int) -> dict[str, float]:
    """Load/fit the model once, then time ``predict_labels(test texts)`` alone."""
    from glotbench.runner.executors import build_datasets
    from glotbench.runner.models import build_model
    from glotbench.runner.protocol import training_sample
    from glotbench.runner.suite import load_suite
    from glotbench.runner.tasks import get_task

    suite = load_suite(suite_path)
    dataset = next(iter(build_datasets(suite).values()))
    task = get_task(dataset.task)
    texts = task.inputs(dataset.test)  # type: ignore[attr-defined]
    model: Any = build_model(spec, base=suite.base_dir)  # a sequence model: predict_labels
    seed = suite.protocol.seed_of(0)
    train = training_sample(dataset.train, seed, suite.protocol.bootstrap_train and model.trains)
    t0 = time.perf_counter()
    model.fit(task, dataset, train, dataset.validation, seed)
    fit = time.perf_counter() - t0
    load = 0.0
    if hasattr(model, "_get"):  # callable adapters load (call the factory) lazily
        t0 = time.perf_counter()
        model._get()
        load = time.perf_counter() - t0
    model.predict_labels(texts[:8])  # warm-up
    # several calls per timing for very fast models, so that one timing is >= ~20 ms
    t0 = time.perf_counter()
    model.predict_labels(texts)
    once = time.perf_counter() - t0
    loops = max(1, min(1000, int(0.02 / max(once, 1e-7))))
    best = float("inf")
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        for _ in range(loops):
            model.predict_labels(texts)
        best = min(best, (time.perf_counter() - t0) / loops)
    return {"predict": best, "fit": fit, "load": load, "n": len(texts)}


def run_suite_wall(suite_path: Path, store_path: Path) -> float:
    from glotbench.runner.executors import run_suite
    from glotbench.runner.suite import load_suite

    _clear_prediction_cache()
    t0 = time.perf_counter()
    summary = run_suite(load_suite(suite_path), store=store_path)
    wall = time.perf_counter() - t0
    assert not summary.failures, summary.failures
    return wall


FIXED_STEPS = (
    "suite load + plan",
    "dataset build",
    "dataset hash",
    "store open (new)",
    "resume check",
    "ScandEval scores",
    "store close",
)
JOB_STEPS = (
    "fit (model)",
    "model load (in predict, per job)",
    "predict (in runner, excl. load)",
    "speed test (model calls)",
    "statistics",
    "job: other (task, adapter, seeding, records)",
    "store write (write_outcome)",
)


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))  # "bench_runner:..." targets
    from _common import load_average, machine_info, print_header, print_table, write_json

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n-test", type=int, default=2048, help="test examples (default 2048)")
    parser.add_argument("--n-train", type=int, default=1024)
    parser.add_argument("--n-val", type=int, default=256)
    parser.add_argument("--iterations", type=int, default=3, help="protocol iterations (jobs)")
    parser.add_argument("--speed-repeats", type=int, default=3, help="protocol speed_repeats")
    parser.add_argument("--sleep-ms", type=float, default=0.5, help="sleep model, ms per item")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs; min reported")
    parser.add_argument(
        "--models",
        default="majority,tfidf-logreg,sleep,py3langid",
        help="comma-separated subset of majority,tfidf-logreg,sleep,py3langid,burn",
    )
    parser.add_argument(
        "--scaling-n",
        default="256,2048,16384",
        help="test sizes for the majority-only overhead-vs-size table ('' to skip)",
    )
    parser.add_argument(
        "--deterministic",
        action="store_true",
        help="mark the non-training models (sleep, py3langid, burn) 'deterministic: true'",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=0,
        help="limit the BLAS/OpenMP thread pools (threadpoolctl); 0 = library default",
    )
    parser.add_argument("--json", default=None, help="also write the results to this JSON file")
    args = parser.parse_args()
    if args.threads > 0:
        # threadpoolctl limits only the libraries already loaded: load scikit-learn's
        # OpenMP runtime and SciPy's OpenBLAS first
        import sklearn.feature_extraction.text  # noqa: F401
        import sklearn.linear_model  # noqa: F401
        from threadpoolctl import threadpool_info, threadpool_limits

        _limits = threadpool_limits(limits=args.threads)  # kept for the whole run
        pools = ", ".join(f"{d['internal_api']}={d['num_threads']}" for d in threadpool_info())
        print(f"thread pools: {pools}")

    info = machine_info(["duckdb", "scikit-learn", "py3langid", "numpy"])
    print_header("runner overhead per example", info)
    names = [m.strip() for m in args.models.split(",") if m.strip()]
    if "py3langid" in names and not langid_available():
        print("py3langid is not importable: skipping that model\n")
        names.remove("py3langid")
    sizes = {"train": args.n_train, "validation": args.n_val, "test": args.n_test}
    print(
        f"dataset: classification, {len(LANGUAGES)} labels, train/validation/test = "
        f"{args.n_train}/{args.n_val}/{args.n_test}; {args.iterations} iterations "
        f"(jobs) per model, speed_repeats = {args.speed_repeats}; sleep model "
        f"{args.sleep_ms} ms per item; min-total of {args.repeats} repeats; BLAS/OpenMP "
        f"threads: {args.threads or 'library default'}; deterministic callables: "
        f"{args.deterministic}\n"
    )

    results: dict[str, Any] = {}
    scaling: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="glotbench-bench-runner-") as tmp:
        folder = Path(tmp)
        # warm-up, not timed: imports, DuckDB's first connection, file caches
        warm = write_suite(
            folder,
            [model_spec("majority")],
            sizes=sizes,
            iterations=1,
            speed_repeats=1,
            name="warm-up",
        )
        protocol_path(warm, folder / "warm-up.duckdb")
        for name in names:
            spec = model_spec(name, **({"ms_per_item": args.sleep_ms} if name == "sleep" else {}))
            if args.deterministic and spec["kind"] == "callable":
                spec["deterministic"] = True
            suite_path = write_suite(
                folder,
                [spec],
                sizes=sizes,
                iterations=args.iterations,
                speed_repeats=args.speed_repeats,
                name=f"bench-{name}",
            )
            best: dict[str, Any] | None = None
            totals = []
            for r in range(max(1, args.repeats)):
                res = protocol_path(suite_path, folder / f"{name}-{r}.duckdb")
                totals.append(res["total"])
                if best is None or res["total"] < best["total"]:
                    best = res
            assert best is not None
            bare = bare_inference(spec, suite_path, args.repeats)
            api_wall = run_suite_wall(suite_path, folder / f"{name}-api.duckdb")
            results[name] = {
                "best": best,
                "totals": totals,
                "bare": bare,
                "run_suite_wall": api_wall,
            }
            print(
                f"{name}: protocol path {min(totals):.3f} s (runs: "
                + ", ".join(f"{x:.3f}" for x in totals)
                + f"); run_suite {api_wall:.3f} s; bare predict {bare['predict'] * 1e3:.3f} ms "
                f"for {bare['n']} texts; load {bare['load']:.3f} s; load avg {load_average()}",
                flush=True,
            )
        for n_test in [int(x) for x in args.scaling_n.split(",") if x.strip()]:
            sub = folder / f"scaling-{n_test}"
            sub.mkdir()
            suite_path = write_suite(
                sub,
                [model_spec("majority")],
                sizes={**sizes, "test": n_test},
                iterations=args.iterations,
                speed_repeats=args.speed_repeats,
                name="scaling",
            )
            best = min(
                (protocol_path(suite_path, sub / f"s{r}.duckdb") for r in range(args.repeats)),
                key=lambda res: res["total"],
            )
            steps = best["steps"]
            fixed = sum(steps[s] for s in FIXED_STEPS)
            jobs = best["jobs"]
            scaling.append(
                {
                    "test size": n_test,
                    "jobs": jobs,
                    "wall s": best["total"],
                    "per suite ms": fixed * 1e3,
                    "per job ms": (best["total"] - fixed) / jobs * 1e3,
                    "store write per job ms": steps["store write (write_outcome)"] / jobs * 1e3,
                    "µs per example": best["total"] / best["examples"] * 1e6,
                }
            )
    print()

    def per_ex(seconds: float, res: dict[str, Any]) -> float:
        return seconds / res["best"]["examples"] * 1e6

    rows = []
    for step in (*FIXED_STEPS, *JOB_STEPS):
        row: dict[str, Any] = {"µs per example": step}
        for name, res in results.items():
            row[name] = per_ex(res["best"]["steps"][step], res)
        rows.append(row)
    summary_rows: list[dict[str, Any]] = []

    def add(label: str, fn: Callable[[dict[str, Any]], float]) -> None:
        summary_rows.append({"µs per example": label, **{n: fn(r) for n, r in results.items()}})

    add("runner wall (step by step)", lambda r: per_ex(r["best"]["total"], r))
    add("run_suite wall (check)", lambda r: per_ex(r["run_suite_wall"], r))

    def bare_s(r: dict[str, Any]) -> float:
        """Bare inference the runner has to do: once per job that predicted."""
        return float(r["bare"]["predict"] * r["best"]["predicted_jobs"])

    add("bare predict_labels", lambda r: per_ex(bare_s(r), r))
    add("overhead = wall − bare predict", lambda r: per_ex(r["best"]["total"] - bare_s(r), r))
    add("  of which fit (model)", lambda r: per_ex(r["best"]["steps"]["fit (model)"], r))
    add(
        "  of which speed test (model)",
        lambda r: per_ex(r["best"]["steps"]["speed test (model calls)"], r),
    )
    add(
        "  of which model load, per job",
        lambda r: per_ex(r["best"]["steps"]["model load (in predict, per job)"], r),
    )

    def own(r: dict[str, Any]) -> float:
        steps = r["best"]["steps"]
        model_side = (
            steps["fit (model)"]
            + steps["speed test (model calls)"]
            + steps["model load (in predict, per job)"]
            + bare_s(r)
        )
        return per_ex(r["best"]["total"] - model_side, r)

    add("  runner's own part", own)

    def ratio(r: dict[str, Any]) -> float:
        bare = per_ex(bare_s(r), r)
        return own(r) / bare if bare >= 0.01 else float("nan")  # majority: inference ≈ 0

    add("runner's own / bare predict", ratio)
    columns = ["µs per example", *results]
    print("Steps (the minimum-total repeat), µs per evaluated example:\n")
    print_table(rows, columns)
    print("Summary, µs per evaluated example:\n")
    print_table(summary_rows, columns)
    if scaling:
        print(
            "Majority baseline (inference ≈ 0, so the wall time is the runner's own) against "
            "the test size; 'per suite' = suite load, dataset build and hash, store open and "
            "close, resume check, scores; 'per job' = the rest divided by the jobs:\n"
        )
        print_table(scaling, list(scaling[0]))
    write_json(
        args.json,
        {
            "machine": info,
            "args": vars(args),
            "steps": rows,
            "summary": summary_rows,
            "scaling": scaling,
            "raw": results,
        },
    )


if __name__ == "__main__":
    main()
