"""What is done with finished results: archives, the report, regressions, runs made elsewhere."""
