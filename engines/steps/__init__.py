"""The steps of a turn, one file each, in the order a turn runs them:

``route`` ─▶ ``condense`` ─▶ ``retrieve`` ─▶ ``gate`` ─▶ (``rerank``) ─▶ ``assemble`` ─▶ ``answer`` ─▶ ``check``

(``rerank`` runs only when a cross-encoder is configured.)

Each takes the turn's :class:`~engines.steps.base.TurnState` and returns a frozen output
(``base.StepOutput``); ``engines.pipeline`` runs them and ``app.compose`` chooses them.
"""
