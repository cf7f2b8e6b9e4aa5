"""``python -m glotbench.cli``: the command line (as ``python -m glotbench``)."""

from glotbench.cli import main

main()
