#!/usr/bin/env python3
"""Measure secret redaction: false alarms, detection and cost.

1. False positives on real transcripts: every string of the transcript fixtures under
   ``tests/`` and ``examples/`` and, when present, of the LongMemEval / LoCoMo text under
   ``/work/shared/data`` (read in place, never copied). None of these holds a real secret, so
   every text the rules change is counted as a false alarm (its kind is printed, not its text;
   the fixtures that plant fake secrets on purpose are listed by file so they can be told apart).
2. False positives on a generated corpus of what people search for: git commit hashes (full
   and short), UUIDs, sha256/md5 sums in log lines, base64 image data, code identifiers and
   code lines that mention tokens, keys and passwords.
3. Detection on generated secrets of every kind (random values in each provider's format).
4. Cost: microseconds per text, and -- unless ``--no-ingest`` -- the bulk loader's rate with
   redaction on and off (``scripts/bench_ingest.py --modes ours,ours-noredact --redact-compare``
   at ``--messages``).

Usage: scripts/bench_redact.py [--messages 20000] [--no-ingest] [--data /work/shared/data]
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import random
import string
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from hermes_store.redaction import Redactor
from hermes_store.redaction.prefilter import prefilter

ROOT = Path(__file__).resolve().parent.parent
TEXT_SUFFIXES = {".json", ".jsonl", ".md", ".txt", ".yaml", ".yml"}


def strings_of(value: object) -> Iterator[str]:
    """Every string inside a decoded JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings_of(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_of(item)


def file_texts(path: Path) -> Iterator[str]:
    """The texts of one transcript file: JSON strings, or the whole file for other text."""
    try:
        raw = path.read_text(encoding="utf-8")
    except (OSError, UnicodeError):
        return
    if path.suffix == ".json":
        try:
            yield from strings_of(json.loads(raw))
            return
        except ValueError:
            pass
    if path.suffix == ".jsonl":
        for line in raw.splitlines():
            try:
                yield from strings_of(json.loads(line))
            except ValueError:
                yield line
        return
    yield raw


def real_corpora(data: Path) -> dict[str, list[tuple[str, str]]]:
    """``{corpus: [(file, text), ...]}`` of the real transcripts available here."""
    corpora: dict[str, list[tuple[str, str]]] = {}
    for name, base in (("fixtures", ROOT / "tests"), ("examples", ROOT / "examples")):
        items = []
        for path in sorted(base.rglob("*")):
            if path.is_file() and path.suffix in TEXT_SUFFIXES and (name == "examples" or "fixtures" in path.parts):
                items.extend((str(path.relative_to(ROOT)), text) for text in file_texts(path))
        corpora[name] = items
    for name in ("longmemeval", "locomo"):
        base = data / name
        if base.is_dir():
            corpora[name] = [(str(path), text) for path in sorted(base.rglob("*.json"))
                             for text in file_texts(path)]
    return corpora


def generated_harmless(rng: random.Random, n: int) -> list[str]:
    """What people search for and must stay searchable (``n`` of each shape)."""
    hexd = "0123456789abcdef"
    out: list[str] = []
    idents = ["token", "tokens", "tokenizer", "api_key", "password", "secret", "access_key", "auth",
              "private_key", "credentials", "bearer"]
    for _ in range(n):
        sha1 = "".join(rng.choice(hexd) for _ in range(40))
        out.append(f"commit {sha1}\nAuthor: Ana <ana@example.org>\n\n    fix loader")
        out.append(f"git checkout {sha1[:7]} && git cherry-pick {sha1[:12]}")
        out.append(f"request {uuid.UUID(int=rng.getrandbits(128))} took 12 ms")
        blob = bytes(rng.getrandbits(8) for _ in range(64))
        out.append(f"{hashlib.sha256(blob).hexdigest()}  dist/app-{rng.randint(1, 9)}.tar.gz")
        out.append(f"md5 {hashlib.md5(blob).hexdigest()} sha1 {hashlib.sha1(blob).hexdigest()}")
        out.append("data:image/png;base64," + base64.b64encode(bytes(rng.getrandbits(8) for _ in range(600))).decode())
        name = rng.choice(idents)
        out.append(f"{name} = get_{name}(request)")
        out.append(f"self.{name} = {name}")
        out.append(f"max_{name}s: int = {rng.randint(1, 9000)}")
        out.append(f"def reset_{name}(user, new_{name}: str) -> None:")
        out.append(f"if not {name}:\n    raise ValueError('missing {name}')")
        out.append(f"{name.upper()}=${{{name.upper()}}}")
        out.append(f"{name} = os.environ['{name.upper()}']")
        out.append(f"const {name}Value = process.env.{name.upper()};")
        out.append("".join(rng.choice(string.ascii_lowercase + " ") for _ in range(300)))
    return out


def _rand(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def generated_secrets(rng: random.Random, n: int) -> list[tuple[str, str, str]]:
    """``(kind, text, secret)`` with random values in each provider's format (``n`` of each)."""
    alnum = string.ascii_letters + string.digits
    upper = string.ascii_uppercase + string.digits
    b64 = alnum + "+/"
    out: list[tuple[str, str, str]] = []
    for _ in range(n):
        pem_body = "\n".join(_rand(rng, b64, 64) for _ in range(4))
        cases = {
            "aws-access-key-id": "AKIA" + _rand(rng, upper, 16),
            "openai-key": "sk-proj-" + _rand(rng, alnum + "_-", 48),
            "anthropic-key": "sk-ant-api03-" + _rand(rng, alnum + "_-", 90),
            "google-api-key": "AIza" + _rand(rng, alnum + "_-", 35),
            "huggingface-token": "hf_" + _rand(rng, alnum, 34),
            "stripe-key": "sk_live_" + _rand(rng, alnum, 24),
            "slack-token": "xoxb-" + _rand(rng, string.digits, 12) + "-" + _rand(rng, alnum, 24),
            "github-token": "ghp_" + _rand(rng, alnum, 36),
            "gitlab-token": "glpat-" + _rand(rng, alnum, 20),
            "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJ" + _rand(rng, alnum, 30) + "." + _rand(rng, alnum + "_-", 43),
        }
        for kind, secret in cases.items():
            out.append((kind, f"here it is: {secret} (do not share)", secret))
        password = _rand(rng, alnum + "!%^", 14)
        out.append(("url-password", f"postgresql://app:{password}@db.internal:5432/prod", password))
        token = _rand(rng, alnum, 32)
        out.append(("authorization", f"curl -H 'Authorization: Bearer {token}' https://api.example.org", token))
        value = _rand(rng, alnum, 24)
        out.append(("assignment", f"export DB_PASSWORD={value}", value))
        out.append(("assignment", f'{{"client_secret": "{value}"}}', value))
        out.append(("aws-secret-key", f"aws_secret_access_key = {_rand(rng, b64, 40)}", ""))
        key = _rand(rng, b64, 86) + "=="
        out.append(("azure-key", f"DefaultEndpointsProtocol=https;AccountName=x;AccountKey={key};", key))
        out.append(("private-key", f"-----BEGIN RSA PRIVATE KEY-----\n{pem_body}\n-----END RSA PRIVATE KEY-----",
                    pem_body.splitlines()[1]))
    return [(k, t, s or t.split(" = ")[-1]) for k, t, s in out]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=20_000, help="bench_ingest size (on vs off)")
    parser.add_argument("--no-ingest", action="store_true", help="skip the bulk-loader comparison")
    parser.add_argument("--data", type=Path, default=Path("/work/shared/data"))
    parser.add_argument("--generated", type=int, default=300, help="generated items per shape")
    args = parser.parse_args()
    redactor = Redactor(b"bench-redact")
    rng = random.Random(24)
    print(f"prefilter engine: {prefilter().engine}")
    print("\n| corpus | texts | changed (false alarms) | rate | kinds |")
    print("|---|---:|---:|---:|---|")
    timed_texts: list[str] = []
    for name, items in real_corpora(args.data).items():
        alarms: Counter[str] = Counter()
        changed = 0
        files: Counter[str] = Counter()
        for path, text in items:
            kinds = redactor.contains_secret(text)
            if kinds:
                changed += 1
                alarms.update(kinds)
                files[path] += 1
            timed_texts.append(text)
        rate = changed / len(items) if items else 0.0
        print(f"| {name} | {len(items):,} | {changed} | {rate:.4%} | {dict(alarms) or '-'} |")
        for path, count in files.most_common(8):
            print(f"|   {path} | | {count} | | |")
    harmless = generated_harmless(rng, args.generated)
    flagged = [t for t in harmless if redactor.contains_secret(t)]
    print(f"| generated harmless (hashes, UUIDs, base64, code) | {len(harmless):,} | {len(flagged)} "
          f"| {len(flagged) / len(harmless):.4%} | - |")
    secrets = generated_secrets(rng, args.generated // 3 or 1)
    missed = Counter(kind for kind, text, secret in secrets if secret in (redactor.redact(text) or ""))
    print(f"\ndetection on generated secrets: {len(secrets) - sum(missed.values())}/{len(secrets)} "
          f"redacted ({(len(secrets) - sum(missed.values())) / len(secrets):.2%}); missed: {dict(missed) or 'none'}")
    start = time.perf_counter()
    for text in timed_texts:
        redactor.redact(text)
    seconds = time.perf_counter() - start
    total_chars = sum(map(len, timed_texts))
    print(f"cost: {seconds / max(1, len(timed_texts)) * 1e6:.2f} us per text "
          f"({len(timed_texts):,} real texts, {total_chars / 1e6:.1f} M chars, "
          f"{total_chars / max(seconds, 1e-9) / 1e6:.0f} M chars/s)")
    if not args.no_ingest:
        out = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_ingest.py"), "--messages",
                              str(args.messages), "--modes", "ours,ours-noredact", "--redact-compare",
                              "--repeat", "2"], capture_output=True, text=True, check=False)
        lines = [line for line in out.stdout.splitlines() if line.startswith(("redaction on vs off", "| ours"))]
        print("\ningest (scripts/bench_ingest.py --redact-compare, best of 2):")
        print("\n".join(lines) if lines else out.stderr[-2000:])


if __name__ == "__main__":
    main()
