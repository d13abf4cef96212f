"""Retrieval: the hybrid retriever over one index (``hybrid``) fusing Chroma vectors, BM25
(``bm25``) and a second embedder for English chunks (``companion``) by weighted reciprocal rank
(``fusion``, a pure function plus the ``QueryFusionRetriever`` subclass); metadata filters that hold
on every retriever (``filters``); query transformations (``transforms``); the chunks beside the best
ones (``neighbours``); and replicas following a shared store (``following``). The retrieve step
and the gate read from here.
"""
