"""The secret rules: a kind, a full expression and a cheap trigger each.

Each rule is one regular expression with a kind. A rule's secret is its group ``v`` when it has one (only the value is
replaced: ``user`` and ``host`` of a URL, the header or key name stay), else the whole match.

The rules follow the provider-documented token formats that secret scanners (gitleaks,
GitHub secret scanning, detect-secrets) match on, kept tight so that what people search for
-- commit hashes, UUIDs, sha256 sums, base64 image data, identifiers -- is never matched: every
token rule needs its provider prefix, the key-position rules need a name that ends in one of
the secret words and a value that looks like a secret (see :func:`value_is_secret`).

Speed: nearly every message holds no secret, so each rule has a *trigger*, a short
expression that matches wherever the rule could; :mod:`hermes_store.redaction.prefilter`
scans a text for every trigger in one pass (Hyperscan when installed, else one ``re``
alternation) and only the rules whose trigger fired run their full expression.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from hermes_store.redaction.encoded import FRAGMENT_TRIGGER, FRAGMENTS

# a string in JSON inside JSON (tool-call arguments): \"value\" (any depth of escaping)
_ESCAPED = r"\\{1,7}\"(?:[^\"\\\n]|\\{1,7}[^\"\\\n]){1,4000}?\\{1,7}\""
_QUOTED = r"\"(?:[^\"\\\n]|\\.){1,4000}\"|'(?:[^'\\\n]|\\.){1,4000}'"
_BARE = r"[^\s\"',;&|<>(){}\[\]\\]{1,400}"
# Where a token may start or end: not inside an ASCII word (``\b`` would also refuse a token glued
# to a non-ASCII letter, ``密钥sk-…``; ``KEY_`` may go before a token), and right after a JSON escape (``\n``, ``\t``, ``\u5bc6``):
# tool-call arguments are stored as JSON, so a token on its own line follows ``\n``.
_START = r"(?:(?<![A-Za-z0-9])|(?<=\\[nrtbf])|(?<=\\u[0-9A-Fa-f]{4}))"
_END = r"(?![A-Za-z0-9_])"


def _after(prefix: str, width: int) -> str:
    """``prefix`` (a literal of ``width`` characters) where :data:`_START` holds before it, the
    check written after the literal: ``re`` then scans for the literal first (several times
    faster than a leading lookaround, which it tries at every position of a long text)."""
    any_width = f"(?s:.){{{width}}}"
    return (f"{prefix}(?:(?<=(?<![A-Za-z0-9]){any_width})|(?<=\\\\[nrtbf]{any_width})"
            f"|(?<=\\\\u[0-9A-Fa-f]{{4}}{any_width}))")

@dataclass(frozen=True)
class Rule:
    """One kind of secret: its Python expression and the trigger that says it may be present.

    ``trigger`` is a regular expression (in the common subset of Hyperscan and ``re``) that
    matches wherever ``expr`` could; ``caseless`` applies to the trigger only. ``priority``
    breaks ties between findings over the same span (lower wins).
    """

    kind: str
    expr: str
    trigger: str
    caseless: bool = False
    priority: int = 0
    #: the expression is tried only where its trigger starts, found within ``window``
    #: characters before a trigger match's end (the rule's match starts where the trigger does)
    window: int | None = None
    #: lower-case strings one of which every trigger match holds (ignoring case): the pure-``re``
    #: prefilter runs the trigger only on an ASCII text whose lower-case form holds one
    literals: tuple[str, ...] = ()
    #: every trigger match *starts* with one of ``literals``: it is tried only where one occurs
    anchored: bool = False
    #: a name in :data:`hermes_store.redaction.encoded.CHECKS`: a match counts only when that
    #: check of its value gives a kind (which it then has); such a rule names no token form
    check: str = ""


_GAP = r"(?:\s|\\{1,7}[nrt])"  # white space, or a JSON escape of it (in JSON inside JSON too)
# ``_auth``: .npmrc's base64 user:password; ``key-data``: a kubeconfig's base64 private key; ``_PASS``
# (``SMTP_PASS``, not ``bypass``); keys whose first word says they are secret (``signing_key``)
_ASSIGN_WORDS = (r"(?:secret(?:[_-]?key)?|token|passw(?:or)?d|passphrase|(?<![A-Za-z])pass|pwd|api[_-]?key|apikey"
                 r"|private[_-]?key|access[_-]?key|auth[_-]?key|_auth|key[_-]data|credentials?"
                 r"|(?:signing|encryption|master|hmac|client|license|shared)[_-]?key)")
_ASSIGN_TRIGGER_WORDS = _ASSIGN_WORDS.replace("(?<![A-Za-z])", "")  # Hyperscan takes no lookbehind: a wider trigger

_GITLAB = "pat|ptt|dt|rtr|rt|cbt|soat|oas|ft|imt|agent"  # personal, pipeline trigger, deploy, runner, CI/CD job, ...
# Provider tokens with a fixed prefix (as gitleaks and GitHub secret scanning match them):
# kind, prefix (a fixed-width expression), its width, the body, the trigger and its literals.
_PREFIXED: tuple[tuple[str, str, int, str, str, tuple[str, ...]], ...] = (
    ("google_oauth_secret", "GOCSPX-", 7, r"[A-Za-z0-9_-]{24,40}", r"GOCSPX-", ("gocspx-",)),
    ("google_oauth_token", r"ya29\.", 5, r"[A-Za-z0-9_-]{20,2000}", r"ya29\.[A-Za-z0-9_-]{20}", ("ya29.",)),
    ("groq_key", "gsk_", 4, r"[A-Za-z0-9]{40,80}", r"gsk_[A-Za-z0-9]{40}", ("gsk_",)),
    ("xai_key", "xai-", 4, r"[A-Za-z0-9]{60,100}", r"xai-[A-Za-z0-9]{60}", ("xai-",)),
    ("perplexity_key", "pplx-", 5, r"[A-Za-z0-9]{40,60}", r"pplx-[A-Za-z0-9]{40}", ("pplx-",)),
    ("replicate_token", "r8_", 3, r"[A-Za-z0-9]{36,40}", r"r8_[A-Za-z0-9]{36}", ("r8_",)),
    ("tavily_key", "tvly-", 5, r"(?:dev-|prod-)?[A-Za-z0-9]{24,64}", r"tvly-", ("tvly-",)),
    ("npm_token", "npm_", 4, r"[A-Za-z0-9]{36}", r"npm_[A-Za-z0-9]{36}", ("npm_",)),
    ("pypi_token", "pypi-", 5, r"AgE[A-Za-z0-9_-]{50,1000}", r"pypi-AgE[A-Za-z0-9_-]{50}", ("pypi-age",)),
    ("sendgrid_key", r"SG\.", 3, r"[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}", r"SG\.[A-Za-z0-9_-]{22}\.", ("sg.",)),
    ("digitalocean_token", "do[por]_v1_", 7, r"[a-f0-9]{64}", r"do[por]_v1_", ("dop_v1_", "doo_v1_", "dor_v1_")),
    ("vault_token", r"hv[sb]\.", 4, r"[A-Za-z0-9_-]{24,300}", r"hv[sb]\.[A-Za-z0-9_-]{24}", ("hvs.", "hvb.")),
    ("age_secret_key", "AGE-SECRET-KEY-1", 16, r"[0-9A-Z]{50,70}", r"AGE-SECRET-KEY-1", ("age-secret-key-1",)),
    ("shopify_token", "shp(?:at|ca|pa|ss)_", 6, r"[a-fA-F0-9]{32}", r"shp(?:at|ca|pa|ss)_",
     ("shpat_", "shpca_", "shppa_", "shpss_")),
    ("linear_key", "lin_api_", 8, r"[A-Za-z0-9]{40}", r"lin_api_", ("lin_api_",)),
    ("notion_token", "ntn_", 4, r"[0-9]{11}[A-Za-z0-9]{35,40}", r"ntn_[0-9]{11}", ("ntn_",)),
    ("sentry_token", "sntry[su]_", 7, r"[A-Za-z0-9_=+/-]{40,1000}", r"sntry[su]_", ("sntrys_", "sntryu_")),
    ("databricks_token", "dapi", 4, r"[a-f0-9]{32}(?:-[0-9])?", r"dapi[a-f0-9]{32}", ("dapi",)),
    ("doppler_token", r"dp\.(?:pt|st|sa|ct)\.", 6, r"[A-Za-z0-9]{40,64}", r"dp\.(?:pt|st|sa|ct)\.",
     ("dp.pt.", "dp.st.", "dp.sa.", "dp.ct.")),
    ("postman_key", "PMAK-", 5, r"[a-f0-9]{24}-[a-f0-9]{34}", r"PMAK-[a-f0-9]{24}-", ("pmak-",)),
    ("grafana_token", "glsa_", 5, r"[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}", r"glsa_", ("glsa_",)),
    ("grafana_token", "glc_", 4, r"[A-Za-z0-9+/]{32,400}={0,2}", r"glc_[A-Za-z0-9+/]{32}", ("glc_",)),
    ("supabase_token", "sbp_", 4, r"[a-f0-9]{40}", r"sbp_[a-f0-9]{40}", ("sbp_",)),
    ("atlassian_token", "ATATT3", 6, r"[A-Za-z0-9_=-]{150,250}", r"ATATT3[A-Za-z0-9_=-]{150}", ("atatt3",)),
    ("heroku_key", "HRKU-", 5, r"[A-Za-z0-9_-]{60}", r"HRKU-", ("hrku-",)),
    ("figma_token", "figd_", 5, r"[A-Za-z0-9_-]{40}", r"figd_", ("figd_",)),
    ("mailgun_key", "key-", 4, r"(?:(?<![\w./-]key-)|(?<=\\[nrtbf]key-))[0-9a-f]{32}", r"key-[0-9a-f]{32}", ("key-",)),
    ("twilio_key", "SK", 2, r"[0-9a-fA-F]{32}", r"SK[0-9a-fA-F]{32}", ("sk",)),
    # an AWS STS session token alone (``aws sts assume-role`` output, a pasted env): its base64 head is fixed
    ("aws_session_token", "IQoJb3JpZ2luX2Vj", 16, r"[A-Za-z0-9+/]{60,4000}={0,2}", r"IQoJb3JpZ2luX2Vj[A-Za-z0-9+/]{60}",
     ("iqojb3jpz2lux2vj",)),
    ("aws_session_token", "FwoGZXIvYXdzE", 13, r"[A-Za-z0-9+/]{60,4000}={0,2}", r"FwoGZXIvYXdzE[A-Za-z0-9+/]{60}",
     ("fwogzxivyxdze",)),
    ("google_oauth_token", "1//0", 4, r"[A-Za-z0-9_-]{40,500}", r"1//0[A-Za-z0-9_-]{40}", ("1//0",)),
)

RULES: tuple[Rule, ...] = (
    Rule("private_key", r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
                        r"(?:[\s\S]{0,20000}?-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
                        r"|(?:[A-Za-z0-9+/=:,\s-]|\\{1,7}[nr]){0,20000})", r"PRIVATE KEY", literals=("private key",)),
    # a PuTTY key file (.ppk): the whole file from its header to its MAC (or to the end of its private lines)
    Rule("private_key", r"PuTTY-User-Key-File-[0-9]{1,2}:[\s\S]{0,20000}?Private-Lines:[ \t]*[0-9]{1,4}"
                        r"(?:(?:\r?\n|(?:\\{1,7}r)?\\{1,7}n)[ \t]*(?!Private-)[A-Za-z0-9+/=]{1,200}){1,400}"
                        r"(?:(?:\r?\n|(?:\\{1,7}r)?\\{1,7}n)Private-MAC:"
                        r"[ \t]*[0-9a-fA-F]{1,128})?", r"PuTTY-User-Key-File-", literals=("putty-user-key-file-",)),
    Rule("anthropic_key", _after("sk-ant-", 7) + r"[A-Za-z0-9_-]{20,300}", r"sk-ant-", literals=("sk-ant-",)),
    Rule("openai_key", _after("sk-", 3) + r"(?!ant-)(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,300}", r"sk-", priority=1, literals=("sk-",)),
    Rule("stripe_key", "(?:" + _after("[rs]k_", 3) + r"(?:live|test)_[A-Za-z0-9]{16,200}|" + _after("whsec_", 6)
         + r"[A-Za-z0-9]{24,200})", r"k_(?:live|test)_|whsec_", literals=("k_live_", "k_test_", "whsec_")),
    Rule("aws_access_key_id", _after("(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)", 4) + r"[A-Z0-9]{16}" + _END,
         r"A(?:KIA|SIA|BIA|CCA|GPA|IDA|ROA|IPA|NPA|NVA|PKA)[A-Z0-9]{16}",
         literals=("akia", "asia", "abia", "acca", "agpa", "aida", "aroa", "aipa", "anpa", "anva", "apka")),
    Rule("google_api_key", _after("AIza", 4) + r"[0-9A-Za-z_-]{35,40}", r"AIza", literals=("aiza",)),
    Rule("huggingface_token", _after("hf_", 3) + r"[A-Za-z0-9]{30,60}" + _END, r"hf_[A-Za-z0-9]{30}", literals=("hf_",)),
    Rule("slack_webhook", r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{10,300}",
         r"hooks\.slack\.com/", literals=("hooks.slack.com/",)),
    Rule("slack_token", _after("x", 1) + r"(?:ox[abposre]|app)-[A-Za-z0-9-]{10,300}", r"xox[abposre]-|xapp-",
         literals=("xox", "xapp-")),
    Rule("github_token", "(?:" + _after("gh[pousr]_", 4) + r"[A-Za-z0-9]{36,255}|" + _after("github_pat_", 11) + r"[A-Za-z0-9_]{50,255})",
         r"gh[pousr]_|github_pat_", literals=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    Rule("gitlab_token", _after("gl", 2) + "(?:" + _GITLAB + r")-[A-Za-z0-9_-]{20,100}", "gl(?:" + _GITLAB + ")-",
         literals=tuple(f"gl{kind}-" for kind in _GITLAB.split("|"))),
    *(Rule(kind, _after(prefix, width) + body + _END, trigger, literals=literals) for kind, prefix, width, body, trigger, literals
      in _PREFIXED),
    # a password given to a command as a flag (agents run these): curl/wget -u user:PASS,
    # mysql -pPASS, sshpass -p PASS; a $VAR, {{template}} or <placeholder> is not one
    Rule("password", r"\b(?:curl|wget|https?|httpie)\b[^\n|;&]{0,300}?\s(?:-u|--user)[ =]['\"]?[^\s:'\"]{1,100}:"
                     r"(?P<v>(?![$<{%])[^\s'\"]{3,300})", r"\s(?:-u|--user)[ =]", literals=("-u", "--user")),
    Rule("password", r"\bmysql(?:dump|admin|sh)?\b[^\n|;&]{0,300}?\s-p(?P<v>(?![$<{%\s'\"])[^\s'\"]{3,300})",
         r"\s-p[^\s]", literals=("-p",)),
    Rule("password", r"\bsshpass\s+-p\s*['\"]?(?P<v>(?![$<{%])[^\s'\"]{1,300})", r"sshpass\s", literals=("sshpass",)),
    # ``--password VALUE`` (``--password=VALUE`` is a key position), ``redis-cli -a PASS``
    Rule("assignment", r"(?<![\w-])--(?P<n>pass(?:w(?:or)?d)?)(?P<sep>\s{1,4})(?P<v>" + _QUOTED + "|" + _BARE + ")",
         r"--pass(?:w(?:or)?d)?\s", priority=2, window=80, literals=("--pass",), anchored=True),
    Rule("password", r"\bredis-cli\b[^\n|;&]{0,300}?\s-a\s{1,4}['\"]?(?P<v>(?![$<{%-])[^\s'\"]{1,300})",
         r"redis-cli\s", literals=("redis-cli",)),
    # a .netrc entry: ``machine HOST login USER password PASS`` (on one line or several; HOST has a dot)
    Rule("password", r"\bmachine" + _GAP + r"{1,8}(?:localhost|[^\s\\.]{1,100}\.[^\s\\]{1,200})(?:" + _GAP
         + r"{1,8}(?:login|account)" + _GAP + r"{1,8}[^\s\\]{1,200}){0,2}" + _GAP + r"{1,8}password" + _GAP
         + r"{1,8}(?P<v>[^\s\\'\"]{1,300})", r"machine" + _GAP, literals=("machine",)),
    # Discord: a bot token (its first part is the base64 of the bot's numeric id) and a webhook URL
    Rule("discord_token", r"(?<![A-Za-z0-9_-])(?:[MNO][DTjz][AEIMQUYcgk][w-z0-5]){5}[A-Za-z0-9]{3,8}\."
                          r"[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_-])",
         r"[MNO][DTjz][AEIMQUYcgk][w-z0-5][A-Za-z0-9]{19,24}\.[A-Za-z0-9_-]{6}\.", literals=(".",)),
    Rule("discord_webhook", r"(?i:discord(?:app)?\.com/api/(?:v[0-9]{1,2}/)?webhooks/)[0-9]{5,30}/"
                            r"(?P<v>[A-Za-z0-9_-]{30,100})", r"discord(?:app)?\.com/api/", caseless=True,
         literals=("discord",)),
    # cookies: every value of a ``Cookie:`` header; a ``Set-Cookie:``'s value (its attributes stay); one
    # that looks like a session id (a digit, or 16 characters in a run): ``theme=dark`` is no secret
    Rule("cookie", _START + r"(?i:set-cookie[\"']?\s{0,4}:\s{0,4}[\"']?)(?P<v>[^\s=;\"',\\]{1,200}="
                   r"(?![{$<%])(?=[^;\r\n\"'\\]{0,4000}[0-9]|[^;\s\"'\\]{16})[^;\r\n\"'\\]{4,4000})", r"set-cookie[\"']?\s{0,4}:", caseless=True, window=64,
         literals=("set-cookie",), anchored=True),
    Rule("cookie", r"(?<![A-Za-z0-9-])(?i:cookie[\"']?\s{0,4}:\s{0,4}[\"']?)(?P<v>[^\s=;\"',\\]{1,200}="
                   r"(?![{$<%])(?=[^\r\n\"'\\]{0,4000}[0-9]|[^\r\n\"'\\]{0,4000}?[^\s;=\"'\\]{16})"
                   r"[^\r\n\"'\\]{4,4000})", r"cookie[\"']?\s{0,4}:", caseless=True, priority=1, window=64,
         literals=("cookie",), anchored=True),
    # the signature of a signed URL (Azure SAS ``sig=``, S3 / GCS presigned) and an STS token in one
    Rule("url_signature", r"[?&](?i:sig|signature|x-amz-signature|x-goog-signature|x-amz-security-token)="
                          r"(?P<v>[A-Za-z0-9%+/=._~-]{16,4000})",
         r"[?&](?:sig|signature|x-amz-signature|x-goog-signature|x-amz-security-token)=", caseless=True,
         literals=("sig=", "signature=", "security-token=")),
    Rule("telegram_bot_token", r"(?<![0-9])[0-9]{8,10}:AA[0-9A-Za-z_-]{33}" + r"(?![A-Za-z0-9_-])",
         r"[0-9]{8}:AA[0-9A-Za-z_-]{33}", literals=(":aa",)),
    Rule("jwt", _after("eyJ", 3) + r"[A-Za-z0-9_-]{8,4000}\.eyJ[A-Za-z0-9_-]{8,8000}\.[A-Za-z0-9_-]{0,4000}", r"\.eyJ", literals=(".eyj",)),
    Rule("azure_key", _START + r"(?i:(?:AccountKey|SharedAccessKey|SharedAccessSignature)=)"
                      r"(?P<v>[A-Za-z0-9+/%=&:._-]{16,1000})", r"(?:accountkey|sharedaccess)", caseless=True,
         literals=("accountkey", "sharedaccess"), anchored=True),
    Rule("url_password", r"(?<![A-Za-z0-9+.-])[a-zA-Z][a-zA-Z0-9+.-]{1,30}://[^\s:/@\"'<>\[\]]{0,200}:"
                         r"(?P<v>[^\s@/?#\"'<>](?:[^\s/?#\"'<>]{0,299}(?<!\\))?)@(?=[^\s@/?#\"'<>\\]*(?:[\s/?#\"'<>\\]|$))",
         r"://[^\s/@:]{0,200}:[^\s@/]{1,300}@", literals=("://",)),
    # a password holding an unencoded ``/``, ``?`` or ``#`` (``postgresql://u:p/ss?w#rd@host/db``): up to the
    # first ``@`` that a host name follows; not a port (``https://host:443/@ana`` is a link), nor a path
    # (``webpack://app:./src/@x``), nor a user part holding a query (``?q=a:b/c@d.org``)
    Rule("url_password", r"(?<![A-Za-z0-9+.-])[a-zA-Z][a-zA-Z0-9+.-]{1,30}://[^\s:/@\"'<>\[\]?#&=]{0,200}:"
                         r"(?P<v>(?![0-9]*(?:[/?#]|$))(?!\.{0,2}/|~)[^\s@\"'<>\\]{1,300}?)"
                         r"@(?=[A-Za-z0-9._%-]{0,253}(?::[0-9]{1,5})?(?:[\s/?#\"'<>\\]|$))",
         r"://[^\s/@:?#&=]{0,200}:[^\s@]{0,300}[/?#][^\s@]{0,300}@", priority=1, literals=("://",)),
    Rule("authorization", _START + r"(?i:(?:authorization|proxy-authorization)(?:\\{0,7}[\"'])?\s{0,4}[:=]\s{0,4}(?:\\{0,7}[\"'])?"
                          r"(?:bearer|basic|token|bot|digest)\s{1,4})(?P<v>[A-Za-z0-9._~+/=:-]{6,4000})",
         r"authorization", caseless=True, window=64, literals=("authorization",), anchored=True),
    # ``Basic <base64 of user:password>`` outside an Authorization header (a header's own rule has it)
    Rule("authorization", _START + r"(?i:basic\s{1,4})(?P<v>[A-Za-z0-9+/]{8,4000}={0,2})(?![A-Za-z0-9+/=])", r"basic\s",
         caseless=True, priority=1, window=16, literals=("basic",), anchored=True, check="basic"),
    # a base64 run holding a secret the rules know (a Kubernetes Secret's data, a .dockerconfigjson)
    Rule("base64", r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{8,90000}={0,2}(?![A-Za-z0-9+/=_-])", FRAGMENT_TRIGGER,
         priority=3, literals=tuple(dict.fromkeys(piece.lower() for piece in FRAGMENTS)), check="base64"),
    # an auth token right after its label, no ``:`` (Twilio's console: ``Auth Token`` then 32 hex digits)
    Rule("token", r"(?i:auth[ \t_-]?token)(?:[\s:=\"'|]|\\{1,7}[nrt\"]){1,12}(?P<v>[0-9a-f]{32})(?![0-9A-Za-z_])",
         r"auth[ \t_-]?token", caseless=True, priority=3, window=16, literals=("auth",), anchored=True),
    Rule("bearer_token", _START + r"(?i:bearer\s{1,4})(?P<v>(?=[A-Za-z._~+/-]*[0-9])[A-Za-z0-9._~+/-]{16,4000}=*)",
         r"bearer\s", caseless=True, priority=1, window=16, literals=("bearer",), anchored=True),
    Rule("assignment", r"(?i:(?P<n>" + _ASSIGN_WORDS + r")\b(?:\\{0,7}[\"'])?\]?\s{0,4}(?P<sep>:=|=>|=|:)\s{0,4})"
                       r"(?P<v>" + _ESCAPED + "|" + _QUOTED + "|" + _BARE + ")",
         _ASSIGN_TRIGGER_WORDS + r"\\{0,7}[\"']?\]?\s{0,4}(?::=|=>|=|:)", caseless=True, priority=2, window=80,
         literals=("secret", "token", "pass", "pwd", "api", "private", "access", "auth", "_auth",
                   "key", "credential", "signing", "encryption", "master", "hmac", "client", "license", "shared"), anchored=True),
    # ~/.docker/config.json: ``"auth": "<base64 of user:password>"``
    Rule("auth_key", r"\"auth\\{0,7}\"\s{0,4}:\s{0,4}\\{0,7}\"(?P<v>[A-Za-z0-9+/]{12,4000}={0,2})\\{0,7}\"",
         r"\"auth\\{0,7}\"\s{0,4}:", literals=('"auth',)),
    # XML configuration (Maven settings.xml, NuGet.config, .NET app.config)
    Rule("assignment", r"(?i:<(?P<n>[A-Za-z0-9_.:-]{0,40}?" + _ASSIGN_WORDS + r")(?P<sep>>))(?P<v>[^<\s]{1,400})(?=</)",
         r"<[A-Za-z0-9_.:-]{0,40}" + _ASSIGN_TRIGGER_WORDS + ">", caseless=True, priority=2, window=120,
         literals=("secret", "token", "pass", "pwd", "api", "private", "access", "auth", "key", "credential")),
    Rule("assignment", r"(?i:\bkey\s{0,4}=\s{0,4}\\{0,7}[\"'](?P<n>[A-Za-z0-9_.:-]{0,40}?" + _ASSIGN_WORDS
                       + r")\\{0,7}[\"']\s{1,8}value(?P<sep>\s{0,4}=\s{0,4}))(?P<v>" + _ESCAPED + "|" + _QUOTED + ")",
         r"key\s{0,4}=\s{0,4}\\{0,7}[\"'][^\"']{0,60}[\"']\s{1,8}value\s{0,4}=", caseless=True, priority=2, window=200,
         literals=("key",)),
    Rule("assignment", r"(?i:(?P<n>passw(?:or)?d|passphrase)\s{1,4}(?P<sep>is|was)\s{1,4}(?::\s{0,4})?)"
                       r"(?P<v>" + _QUOTED + "|" + _BARE + ")",
         r"(?:passw(?:or)?d|passphrase)\s{1,4}(?:is|was)\s", caseless=True, priority=2, window=80,
         literals=("passw", "passp"), anchored=True),
)
#: a JSON ``\u00XX`` escape of a printable ASCII character: a text holding one is read by the rules
#: with its token characters unescaped (``sk-pr\u006fj-…``), so the batch prefilter flags it
ESCAPE_LITERAL = "\\u00"
ESCAPE_TRIGGER = r"\\u00[2-7]"
COMPILED: tuple[re.Pattern[str], ...] = tuple(re.compile(rule.expr) for rule in RULES)
TRIGGERS: tuple[re.Pattern[str], ...] = tuple(re.compile(rule.trigger, re.IGNORECASE if rule.caseless else 0)
                                             for rule in RULES)
FULL = re.compile("|".join(f"(?:{rule.expr.replace('(?P<v>', '(?:')})" for rule in RULES
                           if rule.kind != "assignment" and not rule.check))  # "is this whole value a known token?"
NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")

# Values a key position holds that are no secret: placeholders, code and types.
_PLACEHOLDER = re.compile(
    r"(?i)^(?:\$.*|\{\d*\}|\{\{.*\}\}|\{[A-Za-z_]*\}|<[^>]*>|%\(?[a-z_]*\)?s|\*+|x+|\.+|"
    r"none|null|nil|true|false|yes|no|undefined|str|string|int|bool|bytes|optional\[.*|any|secret|password|"
    r"token|redacted|\[redacted\]|changeme|your[_ -].*|\[redacted:.*)$")
_CODE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$|^[A-Za-z_][A-Za-z0-9_]*$")
_CONSTANT = re.compile(r"^[A-Z][A-Z_]*$")  # "DOMAIN_PASSWORD", YOUR_API_KEY: a name, not a value
_ENV_LINE_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")
_PASSWORD_NAME = re.compile(r"(?i)(?:passw(?:or)?d|passphrase|pwd|(?<![A-Za-z])pass)$")
# what prose says a password *is* when it is no password: "the password is sha256-hashed"
_PROSE_NOT_VALUE = re.compile(r"(?i)^(?:md5|sha-?[0-9]{1,3}|sha3-[0-9]{3}|argon2(?:id|i|d)?|pbkdf2|bcrypt|scrypt"
                              r"|base(?:32|64)|utf-?(?:8|16)|aes-?[0-9]{3}|rot13|x509|pkcs[0-9]{1,2})\W*$")
# a filesystem path (``PWD=/home/ana/work`` in ``env`` output, ``DB_PASSWORD_FILE=/run/secrets/db``):
# where a secret is kept, never the secret
_PATH = re.compile(r"^(?:~|\.{1,2})?/(?:[\w.@+-]+/?)*$")


_LEAD = re.compile(r"^\\*[\"']")
_TRAIL = re.compile(r"\\*[\"']$")


def quote_widths(raw: str) -> tuple[int, int]:
    """How many characters of quoting (escapes included) open and close ``raw`` ((0, 0): bare)."""
    lead, trail = _LEAD.match(raw), _TRAIL.search(raw)
    if lead is None or trail is None or len(raw) < lead.end() + len(trail.group()):
        return 0, 0
    return lead.end(), len(trail.group())


def entropy(value: str) -> float:
    """Shannon entropy of ``value`` in bits per character."""
    if not value:
        return 0.0
    total = len(value)
    return -sum(n / total * math.log2(n / total) for n in Counter(value).values())


def is_documentation_example(value: str) -> bool:
    """Whether the value of a rule's secret group is a placeholder or a name, not a secret
    (``Bearer YOUR_TOKEN_HERE``, ``postgresql://u:PASSWORD@h``, ``[REDACTED]``, ``********``)."""
    return bool(_PLACEHOLDER.match(value) or _CONSTANT.match(value))


def value_is_secret(name: str, raw: str, separator_equals: bool, following: str = "", prose: bool = False) -> bool:
    """Whether the value ``raw`` written after the secret-sounding key ``name`` is a secret.

    ``prose``: the value follows ``password is``; quoted or not, it must look like a password
    (letters and digits, not an algorithm's name nor words joined by hyphens: ``sha256-hashed``).

    Quoted values are string literals: secret unless empty or a placeholder. A bare value
    after an upper-case environment name and ``=`` with no spaces (``DB_PASSWORD=hunter2``) is
    secret unless a placeholder or followed by ``(``/``[`` (code: ``PASSWD = getpass(...)``); other bare values must look random (not a code identifier or attribute
    path, at least 8 characters, mixed classes or high entropy).
    """
    lead, trail = quote_widths(raw)
    quoted = bool(lead)
    value = raw[lead:len(raw) - trail] if quoted else raw
    if len(value) < 4 or is_documentation_example(value) or _is_path(value):
        return False
    if prose and (_PROSE_NOT_VALUE.match(value) or " " in value
                  or any(len(part) >= 4 and part.isalpha() for part in value.split("-")[1:] if "-" in value)):
        return False
    if quoted and not prose:
        # with spaces: a passphrase holds a word no prose has (``p@ss``, ``Tr0ub4dor``); a sentence
        # (``"Enter your password"``, a label in a locale file) is no secret however varied its letters
        return " " not in value.strip() or len(value) >= 12 and entropy(value) >= 3.5 and any(
            _odd_word(word) for word in value.split())
    if following[:1] in ("(", "["):
        return False  # a call or an index: code, not a value
    if separator_equals and _ENV_LINE_NAME.match(name):
        return True
    # a password is often short: one with letters and digits counts from 6 characters (``password: hunter2``)
    shortest = 6 if _PASSWORD_NAME.search(name) else 8
    if len(value) < shortest or value.isdigit() or _CODE.match(value) and not _mixed(value):
        return False
    return _mixed(value) or len(value) >= 16 and entropy(value) >= 4.0


def _odd_word(word: str) -> bool:
    """A word with letters and digits, or a symbol inside it (not an apostrophe or hyphen)."""
    word = word.strip(".,;:!?()\"'")
    inner = word[1:-1]
    return _mixed(word) and not word.isdigit() or any(not (c.isalnum() or c in "'-\u2019") for c in inner)


def _is_path(value: str) -> bool:
    """A filesystem path whose parts are names, not random strings (a base64 secret may start
    with ``/`` too: ``/K7MDENG/bPxRfiCYEXAMPLEKEY`` has a long high-entropy part)."""
    return bool(_PATH.match(value)) and not any(len(part) >= 16 and entropy(part) >= 3.5
                                                for part in value.split("/"))


def _mixed(value: str) -> bool:
    """At least one letter and one digit, or letters of both cases with a digit or symbol."""
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    return has_digit and has_alpha and not value.replace("_", "").isalpha()
