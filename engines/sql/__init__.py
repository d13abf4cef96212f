"""The database road: questions about business data (counts, sums, rankings over tables) answered
by one read-only SELECT the LLM writes. ``schema`` reads the tables from the database itself (through
LlamaIndex's ``SQLDatabase``) with the notes that describe them in words; ``road`` decides, after
the condense step, whether a question goes to the data or the documents; ``prompt`` asks for the
statement and reads it out of the reply; ``guard`` lets through only one read-only SELECT over the
allowed tables with a LIMIT (sqlglot); ``database`` runs it on a read-only connection with a
timeout; ``answer`` writes the figure or a small table without an LLM; ``ask`` ties them together.
"""
