"""The papers' published tables recomputed from their published inputs.

One module per paper, each exposing ``reproduce(data_dir) -> PaperReproduction``;
:mod:`.base` defines the result objects. See docs/reproductions.md.
"""
