"""report layer of glotbench (see DESIGN.md)."""
