"""The problems of a config.yaml that no reader raises: keys given twice, keys nobody reads.

A reader of one setting raises :class:`~hermes_store.home.ConfigError` for a bad value; what
it cannot see is a key it never asks for. A typo (``semantc:``, ``memory_char_limt:``) was
ignored without a word, and YAML keeps the last of two equal keys as silently. This module
finds both on the parsed node tree, each as one line ``FILE:LINE: key: problem``, for
``hermes-store status`` to list with the readers' own problems.

config.yaml is shared with Hermes, which reads many more keys than this package. A section
this package owns (``store``, ``semantic``, ``memory.holographic_store``) flags every key it
does not read; in a shared section (the top level, ``memory``) only a near miss of a key read
here is flagged, so a Hermes key is never warned about.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from dataclasses import dataclass

import yaml

from hermes_store.home import config_node


@dataclass(frozen=True)
class Section:
    """The keys this package reads in one mapping of config.yaml; ``owned``: no one else
    reads there (every other key is a mistake), else only near misses of ``keys`` are."""

    keys: frozenset[str]
    owned: bool


#: How close an unknown key must be to a known one to be called a typo in a shared section.
NEAR_MISS = 0.8


def _mappings(node: yaml.Node, prefix: tuple[str, ...] = ()):
    """Every mapping node under ``node`` with its key path (scalar keys only)."""
    if isinstance(node, yaml.MappingNode):
        yield prefix, node
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                yield from _mappings(value, (*prefix, key.value))


def duplicate_keys(path: str | os.PathLike[str]) -> list[str]:
    """A line for every key given twice in one mapping (YAML silently keeps the last)."""
    root = config_node(path)
    problems: list[str] = []
    if root is None:
        return problems
    for prefix, mapping in _mappings(root):
        seen: dict[str, int] = {}
        for key, _value in mapping.value:
            if not isinstance(key, yaml.ScalarNode):
                continue
            line = key.start_mark.line + 1
            if key.value in seen:
                name = ".".join((*prefix, key.value))
                problems.append(f"{path}:{line}: {name}: given twice (lines {seen[key.value]} and {line}); "
                                "only the later one is used: remove one")
            else:
                seen[key.value] = line
    return problems


def unknown_keys(path: str | os.PathLike[str], sections: Mapping[tuple[str, ...], Section]) -> list[str]:
    """A line for every key of a section in ``sections`` that is not read there (see the
    module docstring for owned and shared sections), naming the keys that are."""
    root = config_node(path)
    problems: list[str] = []
    if root is None:
        return problems
    for prefix, mapping in _mappings(root):
        section = sections.get(prefix)
        if section is None:
            continue
        for key, _value in mapping.value:
            if not isinstance(key, yaml.ScalarNode) or key.value in section.keys:
                continue
            near = difflib.get_close_matches(key.value, sorted(section.keys), n=1, cutoff=NEAR_MISS)
            if not near and not section.owned:
                continue
            name = ".".join((*prefix, key.value))
            hint = (f"did you mean {'.'.join((*prefix, near[0]))}?" if near
                    else "known keys: " + ", ".join(sorted(section.keys)))
            problems.append(f"{path}:{key.start_mark.line + 1}: {name}: unknown key, ignored ({hint})")
    return problems
