"""The options of ``glotbench run``, named so that its signature lists them one a line
(options several commands share are in :mod:`glotbench.cli._options`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

SuiteArgument = Annotated[
    str | None,
    typer.Argument(
        help="Built-in suite name (see 'glotbench suites') or a suite YAML file; "
        "omitted with --model KIND:ID: the built-in euroeval-hub.",
    ),
]

DataDirOption = Annotated[
    Path | None,
    typer.Option("--data-dir", help="Folder the suite's data paths are relative to."),
]

ModelOption = Annotated[
    list[str] | None,
    typer.Option(
        "--model",
        help="A model of your own as KIND:ID, e.g. hf:gpt2, openai:NAME, hf-encoder:ID, "
        "majority: (replaces the suite's models), or the name of one of the suite's "
        "models (repeatable; comma lists accepted).",
    ),
]

ModelArgOption = Annotated[
    list[str] | None,
    typer.Option(
        "--model-arg",
        help="key=value option of the --model KIND:ID models (repeatable, or a comma "
        "list as lm-eval's --model_args; values read as YAML: 8, 0.5, true).",
    ),
]

DeviceOption = Annotated[
    str | None,
    typer.Option("--device", help="Device of KIND:ID models: auto, cpu, cuda, cuda:N, mps."),
]

BatchSizeOption = Annotated[
    int | None,
    typer.Option(
        "--batch-size",
        min=1,
        help="Batch size of KIND:ID models (openai: requests in flight).",
    ),
]

LimitOption = Annotated[
    int | None,
    typer.Option(
        "--limit", min=1, help="Keep the first N test examples of every dataset (a quick run)."
    ),
]

DataOption = Annotated[
    list[str] | None,
    typer.Option(
        "--data",
        help="A local data file (JSONL/CSV/TSV, .conllu, or a saved HF dataset folder) "
        "for the one --task and --language given: runs without a suite (repeatable).",
    ),
]

DumpSuiteOption = Annotated[
    Path | None,
    typer.Option(
        "--dump-suite",
        help="Write the suite YAML of this run (models, datasets, limits) to this file and "
        "stop; 'glotbench run FILE' runs it.",
    ),
]

ListModelsOption = Annotated[
    bool,
    typer.Option(
        "--list-models",
        help="List the model kinds of --model KIND:ID and suites (what each needs, "
        "whether it is installed) and stop.",
    ),
]

RunLanguageOption = Annotated[
    list[str] | None,
    typer.Option("--language", help="Only this language (repeatable; comma lists accepted)."),
]

RunTaskOption = Annotated[
    list[str] | None,
    typer.Option("--task", help="Only this task (repeatable; comma lists accepted)."),
]

RunDatasetOption = Annotated[
    list[str] | None,
    typer.Option("--dataset", help="Only this dataset (repeatable; comma lists accepted)."),
]

IterationsOption = Annotated[
    int | None,
    typer.Option("--iterations", min=1, help="Iterations (default: the suite's, 10)."),
]

SplitsOption = Annotated[
    str | None,
    typer.Option(
        "--splits",
        help="Override every dataset's split sizes: NAME=SIZE pairs joined by commas, "
        "e.g. train=128 or test=256 (a smaller run, e.g. for CI).",
    ),
]

TrainSizesOption = Annotated[
    str | None,
    typer.Option(
        "--train-sizes",
        help="Learning curves: run every model at these training sizes, e.g. "
        "'64,128,256' (nested training subsets).",
    ),
]

ExecutorOption = Annotated[
    str,
    typer.Option(
        "--executor",
        help="local (one job at a time), processes (worker processes on this machine) or ray.",
    ),
]

NumCpusOption = Annotated[
    int | None,
    typer.Option(
        "--num-cpus",
        help="Workers of --executor processes, or CPUs of the local Ray started by --executor ray.",
    ),
]

RayAddressOption = Annotated[
    str | None,
    typer.Option(
        "--ray-address",
        help="Address of a running Ray cluster ('auto': the one 'ray start' runs here); "
        "default: a new local Ray.",
    ),
]

ShardsOption = Annotated[
    Path | None,
    typer.Option(
        "--shards",
        help="Folder all workers can write to: each job's statistics are written there "
        "as a Parquet shard (one file per job) and merged into the store by this process.",
    ),
]

MergeOption = Annotated[
    bool,
    typer.Option(
        "--merge/--no-merge",
        help="With --shards: merge each shard as its job finishes (default), or leave "
        "them for 'glotbench import shards'.",
    ),
]

SpeedOption = Annotated[
    bool,
    typer.Option(
        "--speed/--no-speed",
        help="Run ScandEval's speed benchmark once per model (default: as the suite says).",
    ),
]

SpeedSecondsOption = Annotated[
    float | None,
    typer.Option(
        "--speed-seconds",
        min=0.0,
        help="Seconds of calls per speed document (ScandEval: 3; default: the suite's).",
    ),
]

KeepOutputsOption = Annotated[
    bool | None,
    typer.Option(
        "--keep-outputs/--drop-outputs",
        help="Store every test example's prediction or generated text, compressed "
        "(default: for generative models and free-text tasks); 'glotbench examples' "
        "lists them.",
        show_default=False,
    ),
]

ForceOption = Annotated[bool, typer.Option("--force", help="Re-run and replace stored runs.")]

QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")]
