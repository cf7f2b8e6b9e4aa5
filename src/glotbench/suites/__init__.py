"""Built-in benchmark suites (YAML files in this package); see ``docs/suites.md``."""

from glotbench.runner.suite import Suite, builtin_suites, load_suite

__all__ = ["Suite", "builtin_suites", "load_suite"]
