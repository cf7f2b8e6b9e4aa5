"""Moved to :mod:`glotbench.cli.progress`; this name is the same module object.

Kept so that ``import glotbench.cli_progress`` (and a patch of one of its
names) keeps working.
"""

import sys

from glotbench.cli import progress as _progress

sys.modules[__name__] = _progress
