"""The per-point record: writing it, its provenance, and the columns every record gives a table."""
