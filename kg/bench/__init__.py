"""Benchmarks: synthetic corpora (`synth`), the pipeline against a naive baseline and the
floor (`run`), and `kg serve` under load (`serve`). See docs/performance.md."""
