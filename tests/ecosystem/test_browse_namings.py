"""``browse`` serves the store the URL names, whatever characters its path holds."""

from __future__ import annotations

import pytest
from eco_helpers import get_json, run_cli, start_browse, stop

pytest.importorskip("datasette")
from datasette.utils import tilde_encode  # noqa: E402  (Datasette's own route encoding)


@pytest.mark.parametrize("name", ["st ore#1?a=b%20c.db", "é 桂林.db"])
def test_browse_serves_the_named_file_and_creates_no_other(tmp_path, name):
    """Datasette opens ``file:{path}?mode=ro`` unencoded: a store at ``d 1/x#y/st ore#1.db`` was
    served as a new, empty ``d 1/x`` (created read-write beside it); a ``?`` cuts the name the same
    way and ``%20`` is read as a space: browse showed another database than the one named."""
    folder = tmp_path / "d 1" / "x#y?z%41 é"
    folder.mkdir(parents=True)
    store = folder / name
    url = ["--database-url", f"sqlite:///{store}"]
    home = tmp_path / "home"
    run_cli(home, *url, "facts", "add", "the heron nests by the weir")
    before = sorted(tmp_path.rglob("*"))
    proc, base = start_browse(home, tmp_path.parent / f"{tmp_path.name}-browse.log", *url)
    try:
        (database,) = get_json(f"{base}/-/databases.json")
        facts = get_json(f"{base}/{tilde_encode(database['route'])}/facts.json?_shape=array")
    finally:
        stop(proc)
    assert [f["content"] for f in facts] == ["the heron nests by the weir"]
    beside = {store.with_name(store.name + "-wal"), store.with_name(store.name + "-shm")}  # Datasette's reader
    assert sorted(set(tmp_path.rglob("*")) - beside) == before
