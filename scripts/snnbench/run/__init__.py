"""Running a point's child process: process-group supervision and time limits."""
