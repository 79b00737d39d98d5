"""Entity extraction from fact text: names, quoted terms, ``aka`` aliases and CJK names.

Rules, applied to NFKC-normalised text:

* capitalised names: one or more words starting with an upper-case letter in any
  script (``Alice``, ``McKellar``, ``Ólafur``, ``Дмитрий``, ``New York``,
  ``Bank of America``), a possessive ``'s`` removed; sentence starters, pronouns
  and contractions (``The``, ``I``, ``I'm``, ``Don't``) are not names;
* quoted terms: ``"…"``, ``“…”``, ``«…»``, ``「…」``, ``『…』`` and ``'…'`` where the
  single quotes are real quotes, not apostrophes (``Alice's … Bob's`` yields nothing);
* aliases: ``X aka Y``, ``X a.k.a. Y``, ``X also known as Y``, ``X (aka Y)``,
  ``X, also called Y``: ``Y`` is stored as an alias of ``X``, not as its own entity;
* CJK names: a name followed by an honorific (``田中さん``), a Katakana word, or a
  common Chinese surname plus one or two characters (``王伟``, ``张小明``).

Each entity is at most 80 characters and 8 words; tokens that are numbers,
flags or addresses are ignored.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from hermes_store.redaction import MARKER

MAX_ENTITY_CHARS = 80
MAX_ENTITY_WORDS = 8

# Capitalised words that start sentences or are grammatical, not names.
_NOT_NAMES = frozenset(
    """a an the i i'm i've i'd i'll im this that these those there here it its it's we our us you
    your he she his her they their them my me mine is are was were be been am do does did done
    don't doesn't didn't can can't cannot could would should will won't shall may might must
    and or but if then else when while where what which who whom whose why how yes no not
    also so because since though although however therefore thus hence yet still just only
    please thanks thank hello hi hey ok okay sure maybe perhaps today tomorrow yesterday
    all any some every each many most more much few several both either neither none
    after before during until about above below under over into onto from with without
    for to of in on at by as per via let let's lets note remember always never usually
    often sometimes now later soon once twice again first second third last next new
    user assistant""".split()
)
_NAME_PREFIXES = frozenset({"new", "saint", "st", "san", "santa", "los", "las", "el", "le", "la"})
_CONNECTORS = frozenset({"of", "de", "da", "del", "della", "di", "van", "von", "der", "den",
                         "la", "le", "du", "al", "bin", "ibn", "&"})
_HONORIFICS = ("さん", "先生", "様", "さま", "君", "くん", "ちゃん", "氏", "老师", "先生", "女士", "小姐")
_CN_SURNAMES = frozenset("王李张刘陈杨黄赵吴周徐孙马朱胡郭何林罗郑梁谢宋唐许韩冯邓曹彭曾肖"
                         "田董袁潘蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金廖贾夏韦邹孟熊秦"
                         "邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵钱严覃戴莫孔汤")
# Characters that end a Chinese given name (verbs, particles, function words).
_CN_STOPS = frozenset("的是在和与住喜爱说去有会要了也都就把被给对从向为叫姓想用做来到很不没吃喝看"
                      "买卖写读学工作生活今明昨年月日个这那他她它们我你")
_CJK_PUNCT = "，。！？；：、（）《》「」『』“”‘’"

_WORD = re.compile(r"[^\W_](?:[\w'’.\-]*[^\W_])?", re.UNICODE)
_QUOTED = re.compile(r'"([^"\n]{1,80})"|“([^”\n]{1,80})”|«([^»\n]{1,80})»|「([^」\n]{1,80})」|『([^』\n]{1,80})』')
_SINGLE_QUOTED = re.compile(r"(?:(?<=^)|(?<=[\s(\[{:;,]))['‘]([^'‘’\n]{1,80}?)['’](?=$|[\s)\]}.,;:!?])")
_AKA = re.compile(r"\s*(?:,\s*|\(\s*)?(?<!\w)(?:aka|a\.k\.a\.?|also known as|also called|alias)\s+",
                  re.IGNORECASE)
_KATAKANA = re.compile(r"[\u30A1-\u30FA\u30FC]{2,}")
_HONORIFIC_NAME = re.compile(r"([\u4E00-\u9FFF\u30A1-\u30FA\u30FC]{1,4}?)(?:" + "|".join(_HONORIFICS) + ")")
_CJK_RUN = re.compile(r"[\u4E00-\u9FFF]+")


@dataclass
class ExtractedEntity:
    """One entity found in a text: its display name, aliases and first position."""

    name: str
    aliases: list[str] = field(default_factory=list)
    position: int = 0


def _clean(name: str) -> str:
    name = name.strip().strip(" \t,;:.!?()[]{}\"'‘’“”")
    name = re.sub(r"['’]s$", "", name)
    return re.sub(r"\s+", " ", name).strip()


def _acceptable(name: str) -> bool:
    if not name or len(name) > MAX_ENTITY_CHARS or len(name.split()) > MAX_ENTITY_WORDS:
        return False
    if name.startswith("-") or not any(c.isalpha() for c in name):
        return False
    if re.fullmatch(r"[\d.:/\-]+", name):  # numbers, dates, IP addresses
        return False
    return name.casefold() not in _NOT_NAMES


def _is_capitalised(word: str) -> bool:
    first = word[0]
    return first.isupper() or (len(word) > 1 and first.islower() and word[1].isupper()
                               and word[1:].isalpha() and not word.isupper())


def _sentence_start(text: str, index: int) -> bool:
    before = text[:index].rstrip()
    return not before or before[-1] in ".!?:;\n" + _CJK_PUNCT


def capitalised_names(text: str) -> list[tuple[str, int]]:
    """Runs of capitalised words (connectors allowed inside), with their start offsets."""
    found: list[tuple[str, int]] = []
    matches = list(_WORD.finditer(text))
    i = 0
    while i < len(matches):
        m = matches[i]
        word = m.group(0)
        base = re.sub(r"['’]s$", "", word.casefold())
        prefix_of_name = base in _NAME_PREFIXES and i + 1 < len(matches) and \
            _is_capitalised(matches[i + 1].group(0)) and \
            text[m.end():matches[i + 1].start()] == " "
        if not _is_capitalised(word) or (base in _NOT_NAMES and not prefix_of_name):
            i += 1
            continue
        parts = [m]
        j = i + 1
        while j < len(matches):
            gap = text[parts[-1].end():matches[j].start()]
            if gap.strip() or "\n" in gap:
                break
            nxt = matches[j].group(0)
            if re.search(r"['’]s$", parts[-1].group(0)):
                break
            if _is_capitalised(nxt) and nxt.casefold() not in _NOT_NAMES:
                parts.append(matches[j])
                j += 1
                continue
            if nxt.casefold() in _CONNECTORS and j + 1 < len(matches) and \
                    _is_capitalised(matches[j + 1].group(0)) and \
                    not text[matches[j].end():matches[j + 1].start()].strip():
                parts.extend([matches[j], matches[j + 1]])
                j += 2
                continue
            break
        start = parts[0].start()
        name = _clean(text[start:parts[-1].end()])
        # A lone capitalised word starting a sentence that looks like a verb form or an
        # adverb ("Running", "Finished", "Honestly") is not a name.
        lone_starter = len(parts) == 1 and _sentence_start(text, start) and \
            word.casefold().endswith(("ing", "ed", "ly"))
        if _acceptable(name) and not lone_starter:
            found.append((name, start))
        i = j
    return found


def quoted_terms(text: str) -> list[tuple[str, int]]:
    """Quoted terms (double, typographic, CJK brackets, and genuine single quotes)."""
    found: list[tuple[str, int]] = []
    for m in _QUOTED.finditer(text):
        term = next(g for g in m.groups() if g is not None)
        found.append((_clean(term), m.start()))
    for m in _SINGLE_QUOTED.finditer(text):
        found.append((_clean(m.group(1)), m.start()))
    return [(t, p) for t, p in found if _acceptable(t)]


def cjk_names(text: str) -> list[tuple[str, int]]:
    """Names in CJK text: honorific-marked names, Katakana words, Chinese surname + given name."""
    found: list[tuple[str, int]] = []
    for m in _HONORIFIC_NAME.finditer(text):
        found.append((m.group(1), m.start()))
    for m in _KATAKANA.finditer(text):
        found.append((m.group(0), m.start()))
    for m in _CJK_RUN.finditer(text):
        run = m.group(0)
        for k, char in enumerate(run):
            if char not in _CN_SURNAMES:
                continue
            at_boundary = k == 0 or run[k - 1] in "和与跟叫是给对向"
            if not at_boundary:
                continue
            given = ""
            for nxt in run[k + 1:k + 3]:
                if nxt in _CN_STOPS:
                    break
                given += nxt
            if given:
                found.append((char + given, m.start() + k))
                break
    return [(n, p) for n, p in found if _acceptable(n)]


def _split_aliases(text: str) -> tuple[str, list[tuple[str, str]]]:
    """Find ``X aka Y`` pairs; return the text with the alias parts blanked and the pairs."""
    pairs: list[tuple[str, str]] = []
    out = text
    for m in reversed(list(_AKA.finditer(text))):
        before = text[: m.start()]
        after = text[m.end():]
        left = _last_name(before)
        right = _first_name(after)
        if not left or not right:
            continue
        pairs.append((left, right))
        end = m.end() + after.find(right) + len(right)
        out = out[: m.start()] + " " * (end - m.start()) + out[end:]
    pairs.reverse()
    return out, pairs


def _last_name(before: str) -> str | None:
    quoted = re.search(r'["“「『]([^"”」』]{1,80})["”」』]\s*$', before)
    if quoted:
        return _clean(quoted.group(1))
    names = [n for n, p in capitalised_names(before) if not before[p + len(n):].strip(" '’s")]
    if names:
        return names[-1]
    cjk = cjk_names(before)
    if cjk and not before[cjk[-1][1] + len(cjk[-1][0]):].strip():
        return cjk[-1][0]
    word = re.search(r"([^\W_][\w\-]*)\s*$", before)
    return _clean(word.group(1)) if word and _acceptable(_clean(word.group(1))) else None


def _first_name(after: str) -> str | None:
    quoted = re.match(r'\s*["“「『]([^"”」』]{1,80})["”」』]', after)
    if quoted:
        return _clean(quoted.group(1))
    names = capitalised_names(after)
    if names and not after[: names[0][1]].strip():
        return names[0][0]
    word = re.match(r"\s*([^\W_][\w\-]*)", after)
    if word and _acceptable(_clean(word.group(1))):
        return _clean(word.group(1))
    return None


def extract_entities(text: str) -> list[ExtractedEntity]:
    """Entities of ``text`` in order of first mention; ``aka`` aliases attached, case-insensitive dedup.

    A redaction marker (``[REDACTED:kind:digest]``, what a secret became) names nothing: it is
    read as blank space, so facts that held secrets are not linked through an entity "REDACTED"."""
    text = unicodedata.normalize("NFKC", text or "")
    text = MARKER.sub(lambda m: " " * len(m.group()), text)  # blank, same length: positions kept
    body, pairs = _split_aliases(text)
    candidates: list[tuple[str, int]] = []
    for name, _alias in pairs:
        candidates.append((name, text.find(name)))
    candidates += quoted_terms(body) + capitalised_names(body) + cjk_names(body)
    candidates.sort(key=lambda c: (c[1] if c[1] >= 0 else len(text)))
    by_key: dict[str, ExtractedEntity] = {}
    # a name fully inside a longer quoted/capitalised candidate at the same place is dropped
    for name, pos in candidates:
        key = name.casefold()
        if key in by_key:
            continue
        if any(pos >= 0 and e.position <= pos < e.position + len(e.name) and key in e.name.casefold()
               and key != e.name.casefold() for e in by_key.values()):
            continue
        by_key[key] = ExtractedEntity(name, [], max(pos, 0))
    for name, alias in pairs:
        entity = by_key.get(name.casefold())
        if entity is not None and alias.casefold() != name.casefold() and \
                alias.casefold() not in {a.casefold() for a in entity.aliases}:
            entity.aliases.append(alias)
        by_key.pop(alias.casefold(), None)
    return sorted(by_key.values(), key=lambda e: e.position)
