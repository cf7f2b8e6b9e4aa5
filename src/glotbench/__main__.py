"""``python -m glotbench``: the command line."""

from glotbench.cli import main

main()
