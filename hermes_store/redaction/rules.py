"""The secret rules: one combined, compiled alternation and the cheap pre-filter in front of it.

Each rule is a named group of one regular expression (Python ``re`` tries them left to
right at each position, so the more specific prefixes come first: ``sk-ant-`` before
``sk-``). A rule's secret is the group ``<name>_v`` when it has one (only the value is
replaced: ``user`` and ``host`` of a URL, the header or key name stay), else the whole match.

The rules follow the provider-documented token formats that secret scanners (gitleaks,
GitHub secret scanning, detect-secrets) match on, kept tight so that what people search for
-- commit hashes, UUIDs, sha256 sums, base64 image data, identifiers -- is never matched: every
token rule needs its provider prefix, the key-position rules need a name that ends in one of
the secret words and a value that looks like a secret (see :func:`value_is_secret`).

Speed: nearly every message holds none of the anchors, so :data:`PREFILTER` (a plain
alternation of literals over the lower-cased text, which ``re`` scans with a first-character
set) decides in one pass whether the full expression runs at all.
"""

from __future__ import annotations

import math
import re
from collections import Counter

# Names a key/header may end in for its value to be a secret (compared lower-cased).
_SECRET_NAME = (r"[a-z0-9_.-]{0,60}?(?:secret|token|password|passwd|pwd|api[_-]?key|apikey"
                r"|private[_-]?key|access[_-]?key|secret[_-]?key|auth[_-]?key|client[_-]?secret"
                r"|credentials?)")
_QUOTED = r"\"(?:[^\"\\\n]|\\.){1,4000}\"|'(?:[^'\\\n]|\\.){1,4000}'"
_BARE = r"[^\s\"',;&|<>(){}\[\]]{1,400}"

# (kind, expression). Order matters where prefixes overlap.
RULES: tuple[tuple[str, str], ...] = (
    ("private_key", r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
                    r"(?:[\s\S]{0,20000}?-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
                    r"|(?:[A-Za-z0-9+/=:,\s-]|\\[nr]){0,20000})"),
    ("anthropic_key", r"\bsk-ant-[A-Za-z0-9_-]{20,300}"),
    ("openai_key", r"\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,300}"),
    ("stripe_key", r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,200}"),
    ("aws_access_key_id", r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z0-9]{16}\b"),
    ("google_api_key", r"\bAIza[0-9A-Za-z_-]{35,40}"),
    ("huggingface_token", r"\bhf_[A-Za-z0-9]{30,60}\b"),
    ("slack_webhook", r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{10,300}"),
    ("slack_token", r"\bxox[abposr]-[A-Za-z0-9-]{10,300}"),
    ("github_token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{50,255})"),
    ("gitlab_token", r"\bglpat-[A-Za-z0-9_-]{20,100}"),
    ("jwt", r"\beyJ[A-Za-z0-9_-]{8,4000}\.eyJ[A-Za-z0-9_-]{8,8000}\.[A-Za-z0-9_-]{0,4000}"),
    ("azure_key", r"(?i:\b(?:AccountKey|SharedAccessKey|SharedAccessSignature)=)"
                  r"(?P<azure_key_v>[A-Za-z0-9+/%=&:._-]{16,1000})"),
    ("url_password", r"\b[a-zA-Z][a-zA-Z0-9+.-]{1,30}://[^\s:/@\"'<>\[\]]{1,200}:"
                     r"(?P<url_password_v>[^\s@/\"'<>]{1,300})@"),
    ("authorization", r"(?i:\b(?:authorization|proxy-authorization)[\"']?\s{0,4}[:=]\s{0,4}[\"']?"
                      r"(?:bearer|basic|token|bot|digest)\s{1,4})(?P<authorization_v>[A-Za-z0-9._~+/=:-]{6,4000})"),
    ("bearer_token", r"(?i:\bbearer\s{1,4})(?P<bearer_token_v>(?=[A-Za-z._~+/-]*[0-9])"
                     r"[A-Za-z0-9._~+/-]{16,4000}=*)"),
    ("assignment", r"(?i:(?<![A-Za-z0-9])(?P<assignment_n>" + _SECRET_NAME + r")\b[\"']?\s{0,4}(?::=|=>|=|:)\s{0,4})"
                   r"(?P<assignment_v>" + _QUOTED + "|" + _BARE + ")"),
)

# The literal anchors (lower-cased) at least one of which every rule's match contains.
ANCHORS = ("private key", "sk-", "k_live_", "k_test_", "akia", "asia", "abia", "acca", "agpa", "aida",
           "aroa", "aipa", "anpa", "anva", "apka", "aiza", "hf_", "hooks.slack", "xox", "ghp_", "gho_", "ghs_",
           "ghu_", "ghr_", "github_pat_", "glpat-",
           "eyj", "accountkey", "sharedaccess", "://", "authorization", "bearer", "secret", "token",
           "passw", "pwd", "apikey", "api_key", "api-key", "private", "access", "auth", "credential")
PREFILTER = re.compile("|".join(re.escape(a) for a in sorted(set(ANCHORS), key=len, reverse=True)))

COMBINED = re.compile("|".join(f"(?P<{kind}>{expr})" for kind, expr in RULES))

# Values a key position holds that are no secret: placeholders, code and types.
_PLACEHOLDER = re.compile(
    r"(?i)^(?:\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\{\{.*\}\}|\{[A-Za-z_]*\}|<[^>]*>|%\(?[a-z_]*\)?s|\*+|x+|\.+|"
    r"none|null|nil|true|false|yes|no|undefined|str|string|int|bool|bytes|optional\[.*|any|secret|password|"
    r"token|redacted|changeme|your[_ -].*|\[redacted:.*)$")
_CODE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$|^[A-Za-z_][A-Za-z0-9_]*$")
_ENV_LINE_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")


def entropy(value: str) -> float:
    """Shannon entropy of ``value`` in bits per character."""
    if not value:
        return 0.0
    total = len(value)
    return -sum(n / total * math.log2(n / total) for n in Counter(value).values())


def value_is_secret(name: str, raw: str, separator_equals: bool) -> bool:
    """Whether the value ``raw`` written after the secret-sounding key ``name`` is a secret.

    Quoted values are string literals: secret unless empty or a placeholder. A bare value
    after an upper-case environment name and ``=`` (``DB_PASSWORD=hunter2``) is secret unless
    a placeholder; other bare values must look random (not a code identifier or attribute
    path, at least 8 characters, mixed classes or high entropy).
    """
    quoted = raw[:1] in ("\"", "'") and raw[-1:] == raw[:1] and len(raw) >= 2
    value = raw[1:-1] if quoted else raw
    if len(value) < 4 or _PLACEHOLDER.match(value):
        return False
    if quoted:
        return " " not in value.strip() or len(value) >= 12 and entropy(value) >= 3.5
    if separator_equals and _ENV_LINE_NAME.match(name):
        return True
    if len(value) < 8 or value.isdigit() or _CODE.match(value) and not _mixed(value):
        return False
    return _mixed(value) or entropy(value) >= 3.5


def _mixed(value: str) -> bool:
    """At least one letter and one digit, or letters of both cases with a digit or symbol."""
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    return has_digit and has_alpha and not value.replace("_", "").isalpha()
