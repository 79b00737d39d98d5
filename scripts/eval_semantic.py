"""The ``--semantic MODEL`` part the retrieval evaluations share: embed a freshly indexed home
with the same code ``hermes-store sessions embed`` runs and switch its session_search to the
fused ranking (config.yaml ``semantic.model``), timing the embedding."""

from __future__ import annotations

import time
from typing import Any

from hermes_store.home import Home
from hermes_store.sessions.embeddings import load_embedder
from hermes_store.sessions.storage import open_session_storage
from hermes_store.sessions.vectors import VectorStore, embed_pending


class SemanticSetup:
    """Embeds homes for one model and counts messages and seconds spent."""

    def __init__(self, model: str, extra: dict[str, Any] | None = None) -> None:
        self.model = model
        self.extra = extra or {}
        self.embedder = load_embedder(model)
        self.messages = 0
        self.seconds = 0.0
        self.vector_bytes = 0

    def prepare(self, home: Home, db: Any) -> None:
        """Embed every message of ``db`` (the store of ``home``) and turn the fusion on."""
        vectors = VectorStore.for_home(home)
        began = time.perf_counter()
        done = embed_pending(open_session_storage(db), vectors, self.embedder)
        self.seconds += time.perf_counter() - began
        self.messages += done["embedded"]
        vectors.close()
        self.vector_bytes += sum(
            p.stat().st_size for p in vectors.path.parent.glob(vectors.path.name + "*")
        )
        lines = [f"  model: {self.model}"] + [f"  {k}: {v}" for k, v in self.extra.items()]
        home.config_path.write_text("semantic:\n" + "\n".join(lines) + "\n", encoding="utf-8")

    def summary(self) -> str:
        """Throughput and size of the embedding done so far."""
        rate = self.messages / self.seconds if self.seconds else 0.0
        per = self.vector_bytes / self.messages if self.messages else 0.0
        return (
            f"semantic {self.model}: {self.messages} messages embedded in {self.seconds:.1f} s "
            f"({rate:.0f} messages/s), vector file {per:.0f} bytes/message "
            f"({per * 100_000 / 1e6:.0f} MB per 100k messages)"
        )
