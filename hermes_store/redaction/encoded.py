"""Secrets inside base64: the checks a rule's match must pass to count (lowest layer).

A rule with a ``check`` (:attr:`hermes_store.redaction.rules.Rule.check`) names one of
:data:`CHECKS`; its match counts only when the check gives a kind. Two are here:

- ``basic``: ``Basic <base64>`` whose base64 is a ``user:password`` pair (an HTTP Basic
  credential outside an ``Authorization:`` header, which its own rule covers);
- ``base64``: a base64 run that decodes to text holding a secret the other rules know (a
  Kubernetes Secret's ``data:``, a ``.dockerconfigjson``, ``echo … | base64``): the run is the
  secret, under the kind of what it holds.

The base64 rule's trigger is the base64 of known secret heads (``sk-``, ``ghp_``,
``postgresql://``, ``password``, ...) at each of the three byte alignments
(:func:`head_fragments`), so a text with no encoded secret head never runs it; what a run holds
is then judged by the ordinary rules on the decoded text, with their precision.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable

#: how secrets the rules know begin (their base64, at each alignment, triggers the base64 rule)
SECRET_HEADS: tuple[str, ...] = (
    "sk-proj-", "sk-ant-", "sk-svcacct-", "sk_live_", "rk_live_", "ghp_", "gho_", "ghs_", "ghu_",
    "github_pat_", "glpat-", "xoxb-", "xoxp-", "xapp-", "AKIA", "ASIA", "AIza", "hf_", "GOCSPX-",
    "PRIVATE KEY", "://", "postgresql:", "postgres:", "mysql:", "mongodb", "redis:", "rediss:", "amqp:",
    "amqps:", "https:", "http:", "\"auth", "password", "PASSWORD", "Password", "passwd", "secret", "SECRET",
    "Secret", "token", "TOKEN", "Token", "api_key", "API_KEY", "apiKey", "key-", "AccountKey=",
    "Authorization", "authorization", "Bearer ",
)
MIN_FRAGMENT = 4  # base64 characters a head's fragment must have to be looked for
MAX_DECODED = 1 << 16  # a longer run (an image, an archive) is not decoded
_USER_PASSWORD = re.compile(r"[^\s:]{1,200}:[^\r\n]{1,300}")


def head_fragments(head: str) -> list[str]:
    """The base64 text every encoding of ``head`` holds, at each of the three byte alignments
    (only the characters made of ``head``'s bits alone), standard and URL-safe alphabets."""
    raw = head.encode()
    found: list[str] = []
    for shift in range(3):
        text = base64.b64encode(b"\0" * shift + raw + b"\0\0").decode()
        first, last = -(-shift * 8 // 6), (shift + len(raw)) * 8 // 6  # whole characters inside
        piece = text[first:last]
        if len(piece) >= MIN_FRAGMENT:
            found.append(piece)
            safe = piece.replace("+", "-").replace("/", "_")
            if safe != piece:
                found.append(safe)
    return found


FRAGMENTS: tuple[str, ...] = tuple(dict.fromkeys(piece for head in SECRET_HEADS for piece in head_fragments(head)))
FRAGMENT_TRIGGER = "|".join(re.escape(piece) for piece in FRAGMENTS)
_FRAGMENT = re.compile(FRAGMENT_TRIGGER)


def decoded_text(value: str) -> str | None:
    """``value`` (base64, standard or URL-safe, padded or not) decoded as printable UTF-8 text,
    else None (not base64, binary, too long)."""
    body = value.rstrip("=")
    if len(body) % 4 == 1 or len(body) * 3 // 4 > MAX_DECODED:
        return None
    if "-" in body or "_" in body:
        body = body.replace("-", "+").replace("_", "/")
    try:
        text = base64.b64decode(body + "=" * (-len(body) % 4), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    if not text or not all(c.isprintable() or c in "\n\r\t" for c in text):
        return None
    return text


def basic_credential(value: str, inner: Callable[[str], str | None]) -> str | None:
    """``authorization`` when ``value`` is the base64 of ``user:password``, else None."""
    text = decoded_text(value)
    return "authorization" if text is not None and _USER_PASSWORD.fullmatch(text) else None


def encoded_secret(value: str, inner: Callable[[str], str | None]) -> str | None:
    """The kind of the secret the base64 ``value`` holds (``inner`` finds it in the decoded
    text: the other rules), else None."""
    if _FRAGMENT.search(value) is None:
        return None
    text = decoded_text(value)
    return inner(text) if text is not None else None


#: a rule's ``check`` name -> ``(value, inner) -> kind | None`` (``inner(text)``: the kind of
#: the first secret the other rules find in ``text``, else None)
CHECKS: dict[str, Callable[[str, Callable[[str], str | None]], str | None]] = {
    "basic": basic_credential,
    "base64": encoded_secret,
}
