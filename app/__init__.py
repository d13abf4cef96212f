"""The edge: settings (``config``), the composition root (``compose``), the command lines
(``chat`` REPL, ``ingest``) and what they share (``cli``, ``console``, ``logging_setup``)."""
