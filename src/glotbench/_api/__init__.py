"""The functions :mod:`glotbench.api` defines itself, by subject (the facade imports them).

``stores``: open, import, show and export a store; ``analyses``: the analysis commands;
``harnesses``: importers of evaluation harnesses' results; ``runs``: benchmark runs and
the papers' reproductions.
"""
