"""Benchmarks: modules runnable as `python -m tests.bench.NAME`, printing figures and baselines."""
