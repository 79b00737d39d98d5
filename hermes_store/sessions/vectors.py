"""Message embeddings, stored beside the session index (both engines).

The vectors live where the store's engine keeps them (:mod:`.storage_vectors_sql`): on SQLite
in ``session_vectors.db``, an APSW file next to the store's file; on PostgreSQL in the shared
store's tables, so every home on the server searches them. One float32 vector per embedded
message and model, keyed by the message's row id and the model that made it. A search reads
a memory-mapped cache file of the model's vectors beside the store's file (in the home for a
server) (exact float32 up to
100k vectors, sign-bit candidates rescored in float32 above; :mod:`.vector_index`, kept fresh by
:mod:`.storage_vectors`; figures in docs/retrieval.md). A store without the vector file answers
exactly as before.

Embedding is incremental and resumable: :func:`embed_pending` embeds, in bounded batches, the
messages of the embedded roles (``EMBED_ROLES``, or ``semantic.roles``) that have no current
vector for the model (none yet, or one made from a text the message no longer holds),
committing after each batch.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from hermes_store.sessions.embeddings import (
    EMBED_ROLES,
    Embedder,
    SemanticUnavailable,
    configured_model,
    load_embedder,
    text_of,
)
from hermes_store.sessions.fusion import Fusion
from hermes_store.sessions.reranker import MAX_PAIRS, Reranker, configured_reranker, load_reranker
from hermes_store.sessions.storage import SessionStorage, open_session_storage
from hermes_store.sessions.storage_vectors import VECTORS_FILENAME, VectorStore

log = logging.getLogger(__name__)
_T = TypeVar("_T")

__all__ = [
    "VECTORS_FILENAME",
    "BackgroundEmbedder",
    "SemanticIndex",
    "SemanticSlot",
    "VectorStore",
    "embed_pending",
    "open_semantic",
]


def embed_pending(
    storage: SessionStorage,
    vectors: VectorStore,
    embedder: Embedder,
    *,
    batch: int = 256,
    max_messages: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    roles: Sequence[str] = EMBED_ROLES,
    stop: Callable[[], bool] | None = None,
) -> dict[str, int]:
    """Embed the messages of ``roles`` without a current vector of ``embedder`` (a bounded,
    resumable run: each batch is committed, so an interrupted run continues where it stopped;
    ``stop``, asked before each batch, ends it early, what is left counted as pending;
    ``progress(done, total)`` is called after each batch).

    A vector is current when it was made from the message's present text at its present place
    (the digest and the session and seq kept beside it): a message edited in place (a
    transcript rewritten under the same uid, ``redact``) or a row id that now holds another
    message is embedded again, its vector replaced. Vectors of messages that are gone, or whose
    role is no longer in ``roles``, are pruned.

    Returns ``{"embedded", "pending", "pruned", "stale"}`` (``pending``: still left after
    ``max_messages``; ``stale``: of those found to embed, how many replace an outdated vector).
    """
    vectors.model_name(embedder.name, embedder.legacy_names)  # an older version's vectors, renamed
    states = vectors.states(embedder.name)
    todo: list[tuple[int, str, int, str, str]] = []
    existing: set[int] = set()
    stale = 0
    for session in storage.list_sessions(limit=None):
        for message in storage.get_messages(session["id"], roles=list(roles), nonempty=True):
            mid = int(message["id"])
            existing.add(mid)
            text = text_of(message["role"], message.get("content"), roles)
            if text is None:
                continue
            digest = embedder.digest(text)
            state = states.get(mid)
            if state is not None and state[:2] == (session["id"], int(message["seq"])) and state[2] in (None, digest):
                continue  # current (a vector of an older version, with no digest, is kept as it is)
            stale += state is not None
            todo.append((mid, session["id"], int(message["seq"]), text, digest))
    pruned = vectors.drop_missing(existing, embedder.name) if states.keys() - existing else 0
    limit = len(todo) if max_messages is None else min(len(todo), max_messages)
    done = 0
    while done < limit and not (stop is not None and stop()):
        chunk = todo[done : min(limit, done + batch)]
        encoded = embedder.encode([text for _m, _s, _q, text, _d in chunk])
        vectors.put(
            embedder.name,
            [(mid, sid, seq, encoded[i], digest) for i, (mid, sid, seq, _t, digest) in enumerate(chunk)],
        )
        done += len(chunk)
        if progress is not None:
            progress(done, limit)
    return {"embedded": done, "pending": len(todo) - done, "pruned": pruned, "stale": stale}


class SemanticIndex:
    """What a search needs for its semantic half: the model, the vectors and the fusion.

    The half is optional, so it never fails a search: when the model or the vector file fails
    (a damaged or unreadable file, a model error), :meth:`nearest` and :meth:`nearest_in`
    answer nothing, the search stays lexical, and :attr:`failure` says why (logged, and named
    in the reply's ``semantic_note``) until the next :meth:`nearest` that works."""

    def __init__(self, embedder: Embedder, vectors: VectorStore, fusion: Fusion,
                 reranker: Reranker | None = None) -> None:
        self.embedder = embedder
        self.vectors = vectors
        self.fusion = fusion
        self.reranker = reranker  # None: no ``semantic.reranker`` (or it could not be loaded)
        self._last: tuple[str, Any] | None = None
        self.failure: str | None = None
        self.rerank_failure: str | None = None  # the reranker's, since the last :meth:`nearest`

    def _guarded(self, search: Callable[[], _T], empty: _T) -> _T:
        try:
            return search()
        except Exception as exc:  # noqa: BLE001 - an optional half never fails the search
            self.failure = f"{type(exc).__name__}: {exc}"[:300]
            log.warning("semantic search failed, the results are lexical: %s", self.failure)
            return empty

    def _query(self, query: str) -> Any:
        """``query``'s embedding (the last one kept: a search asks twice for one question)."""
        last = self._last  # one read: another thread may replace it
        if last is None or last[0] != query:
            last = self._last = (query, self.embedder.encode_query([query])[0])
        return last[1]

    def nearest(self, query: str, k: int) -> list[tuple[int, str, int, float]]:
        """The ``k`` embedded messages nearest to ``query`` (see :meth:`VectorStore.nearest`;
        none when the half fails)."""
        self.failure = self.rerank_failure = None
        return self._guarded(lambda: self.vectors.nearest(self.embedder.name, self._query(query), k), [])

    def nearest_in(self, query: str, session_ids: list[str], k: int
                   ) -> dict[str, list[tuple[int, str, int, float]]]:
        """Per session, its ``k`` messages nearest to ``query`` (:meth:`VectorStore.nearest_in`;
        none when the half fails)."""
        return self._guarded(
            lambda: self.vectors.nearest_in(self.embedder.name, session_ids, self._query(query), k), {})

    def rerank_scores(self, query: str, sessions: dict[Hashable, str],
                      contents: Callable[[list[int]], dict[int, str]]) -> dict[Hashable, float]:
        """Per key of ``sessions`` (a ranked session's key -> the id of the session whose
        messages are read), the reranker's best score of the ``fusion.rerank_messages`` messages
        nearest ``query`` (``contents``: message id -> text); a session without an embedded
        message gets none. Empty without a reranker, and when the reranker fails."""
        reranker, count = self.reranker, self.fusion.rerank_messages
        if reranker is None or not sessions or count <= 0:
            return {}

        def scored() -> dict[Hashable, float]:
            ranked = list(dict.fromkeys(sessions.values()))  # the first sessions' messages first
            near = self.vectors.nearest_in(self.embedder.name, ranked, self._query(query), count)
            rows = [row for sid in ranked for row in near.get(sid, ())][:MAX_PAIRS]
            text = contents([row[0] for row in rows])
            pairs = [(sid, text[mid]) for mid, sid, *_rest in rows if text.get(mid)]
            values = reranker.score(query, [body for _sid, body in pairs])
            best: dict[str, float] = {}
            for (sid, _body), value in zip(pairs, values, strict=True):
                best[sid] = max(value, best.get(sid, value))
            return {key: best[sid] for key, sid in sessions.items() if sid in best}

        try:
            return scored()
        except Exception as exc:  # noqa: BLE001 - the fused ranking stands
            self.rerank_failure = f"{type(exc).__name__}: {exc}"[:300]
            log.warning("reranking failed, the results are not reranked: %s", self.rerank_failure)
            return {}

    def note(self) -> str | None:
        """What the reply's ``semantic_note`` says of the last search's failure (None: none)."""
        if self.failure:
            return f"semantic search failed, lexical results only: {self.failure}"
        if self.rerank_failure:
            return f"reranking failed, results are not reranked: {self.rerank_failure}"
        return None

    def close(self) -> None:
        """Close the vector file."""
        self.vectors.close()


def open_semantic(config: dict[str, Any], vectors: VectorStore) -> tuple[SemanticIndex | None, str | None]:
    """The semantic index of a home whose config.yaml sets ``semantic.model`` and whose vectors
    of that model exist, and None otherwise (the search stays lexical) with the reason when
    semantic search was asked for: the model cannot be loaded (or the extra is not installed),
    nothing is embedded with it yet, or the vectors cannot be read. ``vectors`` is closed when
    no index is made."""
    model = configured_model(config)
    if model is None:
        vectors.close()
        if configured_reranker(config) is not None:  # it reads the messages nearest by meaning
            return None, "semantic.reranker needs semantic.model: results are lexical and not reranked"
        return None, None
    try:
        embedder = load_embedder(model)
    except SemanticUnavailable as exc:
        vectors.close()
        return None, f"semantic.model cannot be used ({str(exc)[:240]}): lexical results only"
    unembedded = (f"nothing is embedded with semantic.model {model!r} yet (hermes-store sessions embed):"
                  " lexical results only")
    if not vectors.exists():
        vectors.close()
        return None, unembedded
    try:  # an older version's vectors are renamed (or, read-only, read under their old name)
        stored_as = vectors.model_name(embedder.name, embedder.legacy_names)
    except Exception as exc:  # noqa: BLE001 - either engine's error: the search stays lexical
        log.warning("the vectors of %s cannot be read, the search stays lexical: %s", vectors.path, exc)
        vectors.close()
        return None, f"the vectors cannot be read ({type(exc).__name__}): lexical results only"
    if stored_as != embedder.name:  # a read-only home over an older version's vectors
        embedder = replace(embedder, name=stored_as)
    if not vectors.usable(embedder.name):
        vectors.close()
        return None, unembedded
    reranker, note = _reranker(config)
    fusion = Fusion.from_config(config.get("semantic"),
                                {**embedder.fusion_defaults, **(reranker.fusion_defaults if reranker else {})})
    return SemanticIndex(embedder, vectors, fusion, reranker), note


def _reranker(config: dict[str, Any]) -> tuple[Reranker | None, str | None]:
    """The cross-encoder ``semantic.reranker`` names (None when none is named, or, with the
    note saying why, when it cannot be loaded: the search is then fused without it)."""
    model = configured_reranker(config)
    if model is None:
        return None, None
    try:
        return load_reranker(model), None
    except SemanticUnavailable as exc:
        return None, f"semantic.reranker cannot be used ({str(exc)[:240]}): results are not reranked"


class SemanticSlot:
    """The semantic half of a long-lived tool context (an MCP server, a Hermes plug-in): opened
    on first use, opened again when config.yaml changes, and, while there is none (no vectors
    yet, a model that failed to load), looked for again at most every :attr:`RECHECK_SECONDS`,
    so vectors embedded after the server started are searched without a restart."""

    RECHECK_SECONDS = 30.0

    def __init__(self, home: Any) -> None:
        self.home = home
        self._index: SemanticIndex | None = None
        self._note: str | None = None
        self._config_stamp: tuple[int, int] | None = None
        self._checked: float | None = None

    def _stamp(self) -> tuple[int, int] | None:
        try:
            st = Path(self.home.config_path).stat()
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size

    def get(self) -> tuple[SemanticIndex | None, str | None]:
        """The index (or None) and the note saying why there is none when one was asked for."""
        stamp, now = self._stamp(), time.monotonic()
        fresh = self._checked is not None and stamp == self._config_stamp
        if fresh and (self._index is not None or now - self._checked < self.RECHECK_SECONDS):
            return self._index, self._note
        self.close()
        self._index, self._note = open_semantic(self.home.config(), VectorStore.for_home(self.home))
        self._config_stamp, self._checked = stamp, now
        return self._index, self._note

    def close(self) -> None:
        """Close the index's vectors (a later :meth:`get` opens them again)."""
        if self._index is not None:
            self._index.close()
        self._index = None


class BackgroundEmbedder:
    """Embeds new messages on a thread of its own, so indexing never waits for the model.

    :meth:`schedule` (after each indexing round) wakes the thread; it opens its own store with
    ``open_db``, embeds what is pending in bounded batches and sleeps again. ``close`` stops it
    after the batch in progress (what was committed stays; the next run continues).
    """

    def __init__(
        self,
        open_db: Callable[[], Any],
        vectors: VectorStore,
        embedder: Embedder,
        *,
        batch: int = 256,
        roles: Sequence[str] = EMBED_ROLES,
    ) -> None:
        self._open_db = open_db
        self._roles = tuple(roles)
        self._vectors = vectors
        self._embedder = embedder
        self._batch = batch
        self._wake = threading.Event()
        self._stop = threading.Event()
        self.embedded = 0
        self._base = 0  # embedded before the run in progress
        self.error: str | None = None
        self._asked = 0  # runs asked for
        self._done = 0  # runs asked for before the last finished run began
        self._thread = threading.Thread(target=self._run, name="hermes-embed", daemon=True)
        self._thread.start()

    def schedule(self) -> None:
        """Ask for a run (returns at once)."""
        self._asked += 1
        self._wake.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait()
            self._wake.clear()
            if self._stop.is_set():
                break
            asked = self._asked
            self._base = self.embedded
            try:
                db = self._open_db()
                try:
                    # one pass over the store per run (not one per batch: at 1M messages a
                    # pass takes seconds), stopping between batches when closed
                    done = embed_pending(
                        open_session_storage(db),
                        self._vectors,
                        self._embedder,
                        batch=self._batch,
                        roles=self._roles,
                        stop=self._stop.is_set,
                        progress=self._count,
                    )
                    self.embedded = self._base + done["embedded"]
                finally:
                    db.close()
            except Exception as exc:  # noqa: BLE001 - the watch keeps indexing; the error is kept
                self.error = f"{type(exc).__name__}: {exc}"
            finally:
                self._done = asked

    def _count(self, done: int, _total: int) -> None:
        """Progress of the run in progress: ``embedded`` counts its committed batches too."""
        self.embedded = self._base + done

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no run is asked for or in progress (for tests and a clean stop)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._done >= self._asked:
                return True
            time.sleep(0.05)
        return False

    def close(self) -> None:
        """Stop the thread after the batch in progress and close the vector file."""
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=60)
        self._vectors.close()
