"""The library: a turn's steps (``steps/``), the pipeline that runs them (``pipeline``), one
user's conversation (``session``), the LlamaIndex chat face (``chat``), and what the steps stand
on: retrieval (``retrieval``, ``fusion``, ``bm25``, ``store``, ``filters``), rewriting
(``rewrite``, ``transforms``), answering (``extractive``, ``generation``, ``refusal``,
``writing``), conflicts (``conflicts/``), models (``models/``), ingestion (``documents``,
``ingestion``) and small shared pieces (``text``, ``tokens``, ``io``, ``errors``).
"""
