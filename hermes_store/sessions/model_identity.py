"""The name a model's vectors are stored under: what the model is, not where this machine keeps it.

Vectors are tagged with their model, and a store on a PostgreSQL server is shared by gateways
whose virtual environments (and so the path a ``bundled:`` model resolves to) differ; a venv
rebuilt elsewhere moves the path too. So the tag is the loader's kind and a fingerprint of the
model's weights (:func:`model_identity`): the same weights anywhere (another path, another
package shipping them) give the same tag, and other weights under the same path give another (a vector of one model is never
compared with a question encoded by another). A name that is no path on disk (a
sentence-transformers name in the local cache) is its own tag.

The fingerprint reads a bounded amount: each weight file's size, relative path and its first
and last MiB (at most :data:`MAX_FILES` files), so a 100 MB model costs a few milliseconds.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

#: Bytes read from each end of a weight file.
EDGE_BYTES = 1 << 20
#: Weight files fingerprinted at most (a directory with more is cut, sorted by path).
MAX_FILES = 64
#: What holds a model's weights in a model directory (configs, tokenizers and READMEs, which
#: packages that ship one model vary, are left out).
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".npy", ".onnx")
#: Sub-directories of exported copies of the same weights (present in some packages only).
EXPORT_DIRS = frozenset({"onnx", "openvino"})


def _weight_files(folder: Path) -> list[Path]:
    found = []
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder).parts
        if any(part.startswith(".") or part in EXPORT_DIRS or part == "__pycache__" for part in relative):
            continue
        if path.is_file() and path.suffix.lower() in WEIGHT_SUFFIXES:
            found.append(path)
        if len(found) >= MAX_FILES:
            break
    return found


def _digest_file(digest: hashlib.blake2b, path: Path, label: str) -> None:
    size = path.stat().st_size
    digest.update(f"{label}\0{size}\0".encode())
    with path.open("rb") as handle:
        digest.update(handle.read(EDGE_BYTES))
        if size > 2 * EDGE_BYTES:
            handle.seek(size - EDGE_BYTES)
            digest.update(handle.read(EDGE_BYTES))
        else:
            digest.update(handle.read())


def model_identity(location: str, kind: str) -> str:
    """The tag of the model at ``location`` (of loader ``kind``): ``<kind>#<fingerprint>`` for a
    file or directory on disk with weights, ``location`` itself otherwise."""
    path = Path(location)
    try:
        if path.is_file():
            files = [(path, "")]  # a file: its bytes, whatever it is called
        elif path.is_dir():
            files = [(f, f.relative_to(path).as_posix()) for f in _weight_files(path)]
        else:
            return location
        digest = hashlib.blake2b(kind.encode(), digest_size=8)
        for file, label in files:
            _digest_file(digest, file, label)
    except OSError:
        return location
    if not files:
        return location
    return f"{kind}#{digest.hexdigest()}"
