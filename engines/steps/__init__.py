"""The steps of a turn, one file each, in the order a turn runs them:

``route`` ─▶ ``condense`` ─▶ (``sql``) ─▶ ``retrieve`` ─▶ ``gate`` ─▶ (``rerank``) ─▶ ``assemble`` ─▶ ``answer`` ─▶ ``check``

(``sql`` runs only with a database configured and answers data questions itself; ``rerank`` only
when a cross-encoder is configured.)

Each takes the turn's :class:`~engines.steps.base.TurnState` and returns a frozen output
(``base.StepOutput``); ``engines.pipeline`` runs them and ``app.compose`` chooses them.
"""
