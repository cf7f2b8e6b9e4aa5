"""runner layer of glotbench (see DESIGN.md)."""
