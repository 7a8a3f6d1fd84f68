"""Development tools: benchmarks of the workflow (make bench*) and synthetic records for tests and benches."""
