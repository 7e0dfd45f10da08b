"""Synthetic data with ground truth: scenes (signs, contact cards, shaded objects on backgrounds), per-tool cases,
seeded multi-step tasks and their verification, FaSTA*'s task streams and verification samples, and synthetic tool
tables for scaling the search.

Generators, not fakes: the library uses some of it at run time (FaSTA* induction verifies proposals on
`fasta_tasks.samples`); the benchmarks and tests use all of it. Fakes for tests (random-weight models, slow tools,
hostile uploads) live in `costa.testing`, which the library never imports. Nothing here is imported by `import costa`.
"""
