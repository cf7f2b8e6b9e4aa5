"""Items per second of ``hf-generative`` (tiny random GPT-2), one prompt at a time vs batched.

    PYTHONPATH=src python benchmarks/bench_hf_generation.py
    PYTHONPATH=src python benchmarks/bench_hf_generation.py --items 64 --batch-sizes 1,16

Builds, in a temporary folder, a WordPiece tokenizer trained on the generated
texts and a randomly initialised GPT-2 (``--embd`` wide, ``--layers`` deep;
nothing is downloaded), then times ``HFGenerative.respond`` on ``--items``
prompts of varying length (zero-shot, ``--max-new-tokens`` tokens), greedy
and sampled, for every ``--batch-sizes`` value. Model loading and the
iteration set-up (``fit``) are not timed; the minimum over ``--repeats`` runs
is reported. Each row checks that its responses equal those of the first
batch size (batching must not change a response).

Run it against an older checkout (``PYTHONPATH=/path/to/old/src``) to time
the version without batching: options the old adapter does not know
(``batch_size``) are then left out and the row is labelled "per item".
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import random
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

WORDS = (
    "the movie was good bad great awful fine boring lovely dull acting plot music "
    "story scenes ending actors director film really quite very not at all and but"
).split()


def make_texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 40))) for _ in range(n)]


def build_model_files(folder: Path, embd: int, layers: int, texts: list[str]) -> int:
    import torch
    import transformers
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(
        texts + ["Classify the text. Answer with one of: positive, negative. Text: Answer:"],
        trainers.WordPieceTrainer(vocab_size=400, special_tokens=["[PAD]", "[UNK]", "[SEP]"]),
    )
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", eos_token="[SEP]"
    )
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(
        transformers.GPT2Config(
            vocab_size=len(fast),
            n_embd=embd,
            n_layer=layers,
            n_head=2,
            n_positions=512,
            bos_token_id=fast.eos_token_id,
            eos_token_id=fast.eos_token_id,
        )
    )
    model.save_pretrained(folder)
    fast.save_pretrained(folder)
    return int(sum(p.numel() for p in model.parameters()))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=128)
    parser.add_argument("--batch-sizes", default="1,8,32")
    parser.add_argument("--max-new-tokens", type=int, default=5)
    parser.add_argument("--embd", type=int, default=64)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()

    import torch

    import glotbench
    from glotbench.runner.datasets.base import Dataset  # noqa: F401  (import check)
    from glotbench.runner.models.hf_generative import HFGenerative

    torch.set_num_threads(args.threads)
    batching = "batch_size" in inspect.signature(HFGenerative.__init__).parameters
    texts = make_texts(args.items, seed=1)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "gpt"
        params = build_model_files(folder, args.embd, args.layers, texts)
        print(
            f"glotbench {glotbench.__file__}; torch {torch.__version__}, {args.threads} thread(s); "
            f"GPT-2 with {params:,} parameters; {args.items} prompts, "
            f"{args.max_new_tokens} new tokens; load {os.getloadavg()[0]:.2f}",
            flush=True,
        )
        sizes = [int(b) for b in args.batch_sizes.split(",")] if batching else [1]
        for decoding in ("greedy", "sampling"):
            reference = None
            for size in sizes:
                options = {
                    "max_new_tokens": args.max_new_tokens,
                    "do_sample": decoding == "sampling",
                }
                if batching:
                    options["batch_size"] = size
                model = HFGenerative("bench", str(folder), device="cpu", **options)
                model.labels = ["positive", "negative"]
                model.seed = 0
                from transformers import AutoModelForCausalLM, AutoTokenizer

                model.tokenizer = AutoTokenizer.from_pretrained(folder)
                model.model = AutoModelForCausalLM.from_pretrained(folder).eval()
                times = []
                for _ in range(args.repeats):
                    start = time.perf_counter()
                    responses = model.respond(texts)
                    times.append(time.perf_counter() - start)
                same = None if reference is None else responses == reference
                reference = reference or responses
                best = min(times)
                row = {
                    "decoding": decoding,
                    "batch_size": size if batching else "per item (old adapter)",
                    "seconds": best,
                    "items_per_s": args.items / best,
                    "ms_per_item": 1000 * best / args.items,
                    "same_responses_as_first_row": same,
                }
                rows.append(row)
                print(
                    f"{decoding:8s} batch {row['batch_size']!s:>6}: {best:7.3f} s, "
                    f"{row['items_per_s']:8.1f} items/s, {row['ms_per_item']:7.2f} ms/item, "
                    f"same responses: {same}",
                    flush=True,
                )
    print(f"load at end {os.getloadavg()[0]:.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"parameters": params, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
