"""suites layer of glotbench (see DESIGN.md)."""
