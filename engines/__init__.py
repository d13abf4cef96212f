"""The library. At its root, one turn and what it stands on: the pipeline that runs a turn's steps
(``pipeline``), one user's conversation over it (``session``), what a session may choose
(``choices``), writing the answer (``writing``), the turn record (``record``), the LlamaIndex chat
face (``chat``) and small shared kernels (``text``, ``io``, ``errors``, ``postprocess``). Beside
them, one package per concern: the steps themselves (``steps/``), the documents and the index
(``corpus/``), finding passages (``retrieval/``), the conversation's routing and rewriting
(``conversation/``), answering and refusing (``answering/``), conflicts between passages
(``conflicts/``), models (``models/``), the reader that reads a question beside a passage
(``reader/``) and the database road (``sql/``).
"""
