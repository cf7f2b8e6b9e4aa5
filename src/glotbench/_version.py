"""The version of glotbench (also ``glotbench.__version__``); pyproject.toml reads it from here.

A module of its own at the bottom of the layers, so that the store can record
the version that wrote it without importing the package's public names.
"""

__version__ = "0.1.0"
