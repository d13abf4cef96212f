"""`python -m evals.bench`: benchmarks in one run on one machine, written to a Markdown file.

Parts (each cached under ``--work``, so a killed run resumes; ``all`` runs them in order):

* ``mtrag``   mtRAG-pooled (ClapNQ, FiQA), retrieval only: BM25 / vector / hybrid (equal and
  vector-weighted RRF) x query forms (last turn, all questions, previous + last turn, the
  benchmark's rewrite, our condenser, our condenser fused with the last turn), R@5/R@10/nDCG@5/
  nDCG@10 for turn 1 and later turns, beside the paper's Table 3; refusal on UNANSWERABLE turns
  beside false refusal on answerable ones.
* ``stock``   stock LlamaIndex (``CondenseQuestionChatEngine.from_defaults`` over a plain
  ``VectorStoreIndex`` on the same chunks and vectors, default prompt, same LLM) against ours:
  retrieval by turn bucket, retrieval latency p50/p95, and whole turns with the local LLM on a
  fixed sample of conversation turns (latency, time to first token, LLM calls, prompt tokens).
* ``ingest``  chunks/s end to end against the embedding model alone on the same texts.
* ``scale``   retrieval latency (vector + BM25 + fusion + conflict check, query embedding
  excluded and reported apart) at 1k, 10k and 25k chunks.
* ``turns``   per-step latency of whole turns on the bundled sample (retrieval alone, then each
  answer mode), with peak memory.
* ``report``  the Markdown file and plots from the cached JSON.

The parts take their pipelines from a :class:`~evals.bench.common.Composer` (``__main__`` builds
it from the product's composition root), so nothing here knows which models are in use.
"""
