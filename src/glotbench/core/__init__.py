"""core layer of glotbench (see DESIGN.md)."""
