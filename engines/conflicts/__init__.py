"""Conflicts between retrieved passages: numbers and cues parsed from text (``numbers``,
``lexicon``, ``negation``, ``subjects``), the conflict graph and its resolution by recency
(``graph``), all pure; the LlamaIndex postprocessor (``postprocessor``) and its report (``report``).
"""

#: The seed's same-topic gate on passage cosine: the default for an embedder nobody calibrated.
#: Calibrated embedders carry their own (``engines.models.registry``).
DEFAULT_SIM_THRESHOLD = 0.68

#: Two numbers conflict only when their sentences state the same claim: the Jaccard overlap of
#: their words, values masked, at least this (0 = off). Chosen on the dev pairs
#: (``python -m evals.conflicts data/eval/*/dev/conflict_pairs.jsonl``), never on test: held-out dev
#: precision 0.55 -> 0.67 at the same recall (0.55), the bank's dev pairs unchanged (0.86 / 1.00).
#: The same test on abolition cues (the cue's sentence against the other passage's) lost recall on
#: both dev sets: an abolition names its target by clause or title, not by repeating the claim.
DEFAULT_MIN_CLAIM_OVERLAP = 0.3
