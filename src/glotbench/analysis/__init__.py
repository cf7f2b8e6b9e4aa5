"""analysis layer of glotbench (see DESIGN.md)."""
