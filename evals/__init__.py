"""Measurement through the library's public API: datasets (``dataset``, ``datasets/``), replay
(``runner``, ``configs``, ``evaluation``), metrics and comparisons (``metrics``, ``compare``,
``buckets``, ``stats``), reports (``report``, ``audit``), single-component evaluations
(``conflicts``, ``routes``, ``calibrate``), the benchmark package (``bench/``) and the
``pytest evals/`` floors. The command lines are ``replay``, ``calibrate``, ``conflicts``,
``routes`` and ``bench``."""
