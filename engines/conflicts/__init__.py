"""Conflicts between retrieved passages: numbers and cues parsed from text (``numbers``,
``lexicon``, ``negation``, ``subjects``), the conflict graph and its resolution by recency
(``graph``), all pure; the LlamaIndex postprocessor (``postprocessor``) and its report (``report``).
"""

#: The seed's same-topic gate on passage cosine: the default for an embedder nobody calibrated.
#: Calibrated embedders carry their own (``engines.models.registry``).
DEFAULT_SIM_THRESHOLD = 0.68
