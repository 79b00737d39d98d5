"""FactStoreProvider.save_config edits config.yaml in place: comments and other keys survive."""

from __future__ import annotations

import yaml

from hermes_store.providers.holographic_store import FactStoreProvider


def test_save_config_keeps_comments(tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text("# my settings\nmemory:\n  provider: holographic_store  # chosen by hand\nmodel: x\n")
    FactStoreProvider().save_config({"default_trust": "0.6", "min_trust_threshold": 0.2}, str(tmp_path))
    text = config.read_text()
    assert "# my settings" in text and "# chosen by hand" in text
    data = yaml.safe_load(text)
    assert data["model"] == "x" and data["memory"]["provider"] == "holographic_store"
    section = data["memory"]["holographic_store"]
    assert section["default_trust"] == 0.6 and section["min_trust_threshold"] == 0.2
