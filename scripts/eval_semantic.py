"""The ``--semantic MODEL`` part the retrieval evaluations share: embed a freshly indexed home
with the same code ``hermes-store sessions embed`` runs and switch its session_search to the
fused ranking (config.yaml ``semantic.model``), timing the embedding.

With a cache directory (``--semantic-cache DIR``, filled by ``scripts/semantic_cache.py``) the
model's vectors of texts already in the cache are read from it instead of computed: the same
vectors, so the figures are those of the model, without its minutes of CPU per run."""

from __future__ import annotations

import dataclasses
import hashlib
import time
from pathlib import Path
from typing import Any

from hermes_store.home import Home
from hermes_store.sessions import embeddings
from hermes_store.sessions.embeddings import (
    EMBED_ROLES,
    Embedder,
    SemanticUnavailable,
    load_embedder,
)
from hermes_store.sessions.reranker import resolve_reranker
from hermes_store.sessions.storage import open_session_storage
from hermes_store.sessions.vectors import VectorStore, embed_pending


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


class EmbeddingCache:
    """Vectors of one model keyed by the SHA-1 of the (cut) text, in ``DIR/<model>.npz``; with
    ``query`` the model's question encoding (its own file, ``DIR/<model>.query.npz``, when the
    model encodes a question otherwise than a message)."""

    def __init__(self, directory: Path, embedder: Embedder, *, query: bool = False) -> None:
        self.embedder = embedder
        self.chars = embedder.chars
        self.query = query and embedder.query_raw is not None
        suffix = ".query.npz" if self.query else ".npz"
        self.path = Path(directory) / (_digest(embedder.name)[:16] + suffix)
        self.rows: dict[str, Any] = {}
        if self.path.is_file():
            np = embeddings.numpy_module()
            with np.load(self.path) as stored:
                self.rows = dict(zip(stored["keys"].tolist(), stored["vectors"], strict=True))

    def missing(self, texts: list[str]) -> list[str]:
        """The texts of ``texts`` without a cached vector."""
        return [t for t in texts if _digest(t[: self.chars]) not in self.rows]

    def add(self, texts: list[str], vectors: Any) -> None:
        """Remember ``vectors`` (one row per text)."""
        for text, vector in zip(texts, vectors, strict=True):
            self.rows[_digest(text[: self.chars])] = vector

    def save(self) -> None:
        """Write the cache file."""
        np = embeddings.numpy_module()
        if not self.rows:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        keys = list(self.rows)
        tmp = self.path.with_suffix(".tmp.npz")
        np.savez(tmp, keys=np.array(keys), vectors=np.vstack([self.rows[k] for k in keys]))
        tmp.replace(self.path)

    def encode(self, texts: list[str]) -> Any:
        """Vectors of ``texts``: cached ones read, the others computed (and remembered)."""
        np = embeddings.numpy_module()
        todo = list(dict.fromkeys(self.missing(texts)))
        if todo:
            model = self.embedder.encode_query if self.query else self.embedder.encode
            self.add(todo, model(todo))
        return np.vstack([self.rows[_digest(t[: self.chars])] for t in texts])


def cached_embedder(model: str, directory: Path) -> Embedder:
    """The model ``model`` behind the cache in ``directory``, registered so that
    ``load_embedder(model)`` (what session_search calls) returns it too."""
    embedder = load_embedder(model)
    cache = EmbeddingCache(directory, embedder)
    questions = EmbeddingCache(directory, embedder, query=True) if embedder.query_raw else None
    wrapped = dataclasses.replace(embedder, encode_raw=cache.encode,
                                  query_raw=None if questions is None else questions.encode)
    embeddings._CACHE[embeddings.resolve_model(model)] = wrapped
    return wrapped


#: What ``--reranker auto`` (the default) names when an installed package ships it.
DEFAULT_RERANKER = "bundled:ms-marco-MiniLM-L-12-v2"


def add_reranker_argument(parser: Any) -> None:
    """``--reranker`` of the evaluation scripts (with ``--semantic``)."""
    parser.add_argument("--reranker", default="auto", metavar="MODEL",
                        help="with --semantic: semantic.reranker (default auto: "
                             f"{DEFAULT_RERANKER} when installed; none: no reranking)")


def chosen_reranker(value: str | None) -> str | None:
    """The reranker ``--reranker`` names: ``auto`` is :data:`DEFAULT_RERANKER` when a package
    ships it (else none), ``none`` or empty is none, anything else as given."""
    if not value or value.lower() == "none":
        return None
    if value.lower() != "auto":
        return value
    try:
        resolve_reranker(DEFAULT_RERANKER)
    except SemanticUnavailable:
        return None
    return DEFAULT_RERANKER


class SemanticSetup:
    """Embeds homes for one model and counts messages and seconds spent."""

    def __init__(self, model: str, extra: dict[str, Any] | None = None,
                 cache: Path | None = None, roles: tuple[str, ...] = EMBED_ROLES,
                 reranker: str | None = None) -> None:
        self.model = model
        self.extra = ({"reranker": reranker} if reranker else {}) | (extra or {})
        self.roles = tuple(roles)
        self.embedder = cached_embedder(model, cache) if cache else load_embedder(model)
        self.messages = 0
        self.seconds = 0.0
        self.vector_bytes = 0

    def prepare(self, home: Home, db: Any) -> None:
        """Embed every message of ``db`` (the store of ``home``) and turn the fusion on."""
        vectors = VectorStore.for_home(home)
        began = time.perf_counter()
        done = embed_pending(open_session_storage(db), vectors, self.embedder, roles=self.roles)
        self.seconds += time.perf_counter() - began
        self.messages += done["embedded"]
        self.vector_bytes += vectors.disk_bytes()
        vectors.close()
        lines = [f"  model: {self.model}", f"  roles: [{', '.join(self.roles)}]"]
        lines += [f"  {k}: {v}" for k, v in self.extra.items()]
        home.config_path.write_text("semantic:\n" + "\n".join(lines) + "\n", encoding="utf-8")

    def summary(self) -> str:
        """Throughput and size of the embedding done so far."""
        rate = self.messages / self.seconds if self.seconds else 0.0
        per = self.vector_bytes / self.messages if self.messages else 0.0
        return (
            f"semantic {self.model} ({'+'.join(self.roles)}): {self.messages} messages embedded in {self.seconds:.1f} s "
            f"({rate:.0f} messages/s), vectors on disk {per:.0f} bytes/message "
            f"({per * 100_000 / 1e6:.0f} MB per 100k messages); "
            + (f"reranked by {self.extra['reranker']}" if self.extra.get("reranker") else "not reranked")
        )
