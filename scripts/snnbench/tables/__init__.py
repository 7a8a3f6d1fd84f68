"""Tables from records: collect, the tables written after errors, failed points, CSV files."""
