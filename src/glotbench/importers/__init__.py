"""importers layer of glotbench (see DESIGN.md)."""
