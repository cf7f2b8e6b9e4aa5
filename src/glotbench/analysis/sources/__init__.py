"""The ways data comes into an analysis: tidy files, the store, paired files.

Each module here reads (a file, a store, line-aligned system outputs), checks
and filters what it read, and hands the statistics of
:mod:`glotbench.analysis` plain inputs (:class:`ReplicatedScores`, frames,
per-example statistics). The statistics never import from here
(tests/test_architecture.py): an estimator does not know where its numbers
came from.
"""
