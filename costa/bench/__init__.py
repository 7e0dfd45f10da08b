"""Benchmarks and the synthetic data they run on (each module measures one thing against a baseline in the same run)."""
