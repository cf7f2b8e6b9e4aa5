"""The ``vllm`` model kind on a GPU: load time, throughput, and seeded repeatability.

    PYTHONPATH=src python benchmarks/bench_vllm.py                      # a small instruct model
    PYTHONPATH=src python benchmarks/bench_vllm.py --model /path/to/model --items 2000

Needs vLLM and a CUDA GPU (``pip install 'glotbench[vllm]'``); without them it
says so and exits 0. It writes a sentiment-like classification set (texts that
name their label) to a temporary folder, runs it through ``glotbench run``'s
runner with the ``vllm`` kind for ``--iterations`` sampled iterations, prints
per run the requests, prompt and completion tokens, generation seconds,
completion tokens/s and per-request latency (from the run's stored metadata),
then runs the suite again into a second store and checks that every run's
per-example statistics are identical (same iteration seeds → same per-request
seeds → same responses).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
import time
from pathlib import Path

from glotbench import api
from glotbench.store import Store


def write_suite(folder: Path, model: str, items: int, iterations: int) -> Path:
    words = {"pos": "wonderful, I loved it", "neg": "dreadful, I hated it"}
    rows = []
    for i in range(items + 16):
        label = "pos" if i % 2 else "neg"
        split = "train" if i < 16 else "test"
        rows.append(
            {"id": f"r{i}", "text": f"Review {i}: {words[label]}.", "label": label, "split": split}
        )
    (folder / "data.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", "utf-8")
    suite = {
        "name": "bench-vllm",
        "protocol": {"iterations": iterations, "seed": 1, "speed_iterations": 0},
        "datasets": [
            {"name": "reviews", "task": "sentiment", "language": "en", "loader": "jsonl",
             "paths": ["data.jsonl"], "splits": "predefined"}
        ],
        "models": [
            {"name": "vllm-model", "kind": "vllm",
             "options": {"path": model, "few_shot": 2, "temperature": 0.7,
                         "gpu_memory_utilization": 0.5}}
        ],
    }  # fmt: skip
    path = folder / "suite.yaml"
    path.write_text(json.dumps(suite), "utf-8")
    return path


def statistics(store: Path) -> dict[tuple[str, int | None], bytes]:
    with Store.open(store, read_only=True) as handle:
        runs = handle.runs.frame()
        return {
            (r["metric"], r["seed"]): handle.stats.of_run(r["run_id"])[1].tobytes()
            for r in runs.to_dict(orient="records")
        }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="Qwen/Qwen2.5-0.5B-Instruct")
    parser.add_argument("--items", type=int, default=512)
    parser.add_argument("--iterations", type=int, default=2)
    args = parser.parse_args()
    if importlib.util.find_spec("vllm") is None:
        print("vLLM is not installed (pip install 'glotbench[vllm]'); nothing to measure")
        return 0
    from glotbench.runner.models.vllm_offline import cuda_available

    if not cuda_available():
        print("no CUDA GPU: the vllm kind runs on a GPU only; nothing to measure")
        return 0
    folder = Path(tempfile.mkdtemp(prefix="glotbench-bench-vllm-"))
    suite = write_suite(folder, args.model, args.items, args.iterations)
    stores = [folder / "first.duckdb", folder / "second.duckdb"]
    for store in stores:
        start = time.perf_counter()
        summary = api.run_benchmark(suite, store=store, scores=False, executor="local")
        print(f"{store.name}: {summary.completed} runs in {time.perf_counter() - start:.1f} s")
        if summary.failures:
            print(summary.failures)
            return 1
    with Store.open(stores[0], read_only=True) as handle:
        runs = handle.runs.frame()
    seen = set()
    for rec in runs.to_dict(orient="records"):
        if rec["seed"] in seen:
            continue
        seen.add(rec["seed"])
        meta = rec["model_metadata"]
        meta = json.loads(meta) if isinstance(meta, str) else meta
        latency = meta["latency_seconds"] or {}
        print(
            f"seed {rec['seed']}: {meta['requests']} requests, {meta['prompt_tokens']:,} prompt "
            f"+ {meta['completion_tokens']:,} completion tokens in "
            f"{meta['generation_seconds']:.2f} s ({meta['completion_tokens_per_second'] or 0:,.0f}"
            f" tokens/s); latency median {latency.get('median', float('nan')):.3f} s; "
            f"unparsed {meta['unparsed_rate']:.3f}"
        )
    same = statistics(stores[0]) == statistics(stores[1])
    print(f"second run's statistics identical to the first: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
