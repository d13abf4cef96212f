"""The tokenizer that sizes chunks, explicit instead of LlamaIndex's process-wide one.

``SentenceSplitter`` counts chunk sizes with LlamaIndex's global tokenizer unless given one, so a
user who changed ``Settings.tokenizer`` would silently get other chunks in the same index. The
ingestion passes this tokenizer explicitly and its name enters the chunking fingerprint. It is
cl100k_base (what LlamaIndex uses by default), read from the copy bundled inside
llama-index-core: no network, no environment variable set.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable
from pathlib import Path

TOKENIZER_NAME = "cl100k_base"
_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
# cl100k_base's split pattern and special tokens (tiktoken_ext/openai_public.py; fixed for this encoding).
_PATTERN = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|"""
            r"""\s++$|\s*[\r\n]|\s+(?!\S)|\s""")
_SPECIAL = {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276}


def load_tokenizer() -> Callable[[str], list[int]]:
    """cl100k_base's ``encode`` (all special tokens allowed, as LlamaIndex's default does)."""
    import llama_index.core
    import tiktoken

    blob = Path(llama_index.core.__file__).parent / "_static" / "tiktoken_cache" / hashlib.sha1(_URL.encode()).hexdigest()
    data = blob.read_bytes()
    if hashlib.sha256(data).hexdigest() != _SHA256:
        raise RuntimeError(f"{blob} is not the cl100k_base vocabulary; reinstall llama-index-core")
    ranks = {base64.b64decode(token): int(rank) for token, rank in (line.split() for line in data.splitlines() if line)}
    encoding = tiktoken.Encoding(TOKENIZER_NAME, pat_str=_PATTERN, mergeable_ranks=ranks, special_tokens=_SPECIAL)
    return lambda text: encoding.encode(text, allowed_special="all")
