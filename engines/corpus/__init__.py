"""The corpus: a team's documents read and validated into plain records (``documents``; PDF, DOCX and
HTML converted to Markdown by ``converted`` with ``pdf`` and ``markup``, files not worth indexing named by
``screening``, each chunk's page and section by ``anchors``), written
into the index idempotently and crash-safely (``ingestion``), the index on disk with Chroma, BM25
and its manifest (``store``), the tokenizer that sizes chunks (``tokens``), and which documents
replace which as read from their own words (``replacements``, ``document_names``). Everything a
turn later retrieves was put here.
"""
