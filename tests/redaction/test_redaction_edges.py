"""Secrets where a transcript really puts them: glued to non-ASCII text, after a JSON escape
(tool-call arguments are stored as JSON, so a line of a written ``.env`` file follows ``\\n``),
short passwords in YAML, an empty URL user (``redis://:pass@host``), ``SECRET_KEY=``."""

from __future__ import annotations

import json

import pytest

from hermes_store.redaction import MARKER, Redactor

R = Redactor(b"edge-key")

TOKENS = {
    "openai-key": "sk-proj-R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3sOnlyXyZ",
    "anthropic-key": "sk-ant-admin01-Wq2Er4Ty6Ui8Op0As2Df4Gh6Jk8Lz0Xc2Vb4Nm6Qw8Er0Ty2Ui4-Op6AsAA",
    "aws-access-key-id": "AKIAQ3EGRTXMPL4Z7K2V",
    "google-api-key": "AIzaSyD4Fg7Hj9Kl2Mn5Pq8Rs1Tu4Vw7Xy0Za3B",
    "huggingface-token": "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",
    "stripe-key": "rk_live_51Ab2Cd3Ef4Gh5Ij6Kl7Mn8Op9Qr",
    "slack-token": "xoxp-2401234567-5123456789012-5123456789012-abcdef0123456789abcdef01234567",
    "github-token": "gho_R2d2C3p0Bb8Yoda4Luke6Leia8Han0Solo2Xy",
    "gitlab-token": "glpat-Xy7Zw9Vu1Ts3Rq5Po7Nm",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbmEiLCJleHAiOjE5MDB9.Qm9ndXNTaWduYXR1cmVGb3JUZXN0aW5n",
}
PLACES = {
    "glued to Chinese": "我的密钥{}请保密",
    "glued to an accented letter": "clé{}",
    "after an escaped newline": "first line\\n{}\\nlast line",
    "after an escaped tab": "name\\t{}",
    "after a \\u escape": "\\u5bc6\\u94a5{}",
    "after KEY_": "OPENAI_{}",
}


@pytest.mark.parametrize("place", sorted(PLACES))
@pytest.mark.parametrize("kind", sorted(TOKENS))
def test_token_found_wherever_it_is_glued(kind: str, place: str) -> None:
    token = TOKENS[kind]
    out = R.redact(PLACES[place].format(token))
    assert token not in out and token[-12:] not in out
    assert f"[REDACTED:{kind}:" in out


def test_env_file_written_through_a_tool_call_is_redacted() -> None:
    """A Write/shell tool call's arguments hold the file with ``\\n`` escapes: each
    ``NAME=value`` line is a ``.env`` line all the same."""
    args = json.dumps({"file_path": ".env", "content": "DEBUG=1\nDB_PASSWORD=correcthorse\nREDIS_PASSWORD=hunter2\n"})
    out = R.redact(args)
    assert "correcthorse" not in out and "hunter2" not in out
    assert json.loads(out)["content"].startswith("DEBUG=1\nDB_PASSWORD=[REDACTED:password:")
    twice = R.redact(json.dumps(json.dumps({"cmd": "cat > .env <<EOF\nDB_PASSWORD=correcthorse\nEOF"})))
    assert "correcthorse" not in twice


@pytest.mark.parametrize(("text", "secret"), [
    ("redis://:Vq7xP2Lm9zz@cache:6379/0", "Vq7xP2Lm9zz"),
    ("REDIS_URL=rediss://:Vq7xP2Lm9zz@cache.example.com:6380", "Vq7xP2Lm9zz"),
    ("数据库postgresql://deploy:Vq7xP2Lm9zz@db.internal:5432/app", "Vq7xP2Lm9zz"),
    ("x\\nAccountKey=q8Zr3Lw9XbT2mN5vK7pQ1sD4fG6hJ0kL8aW2eR4tY6u=", "q8Zr3Lw9XbT2mN5vK7pQ1sD4fG6hJ0kL"),
    ("database:\n  password: hunter2\n", "hunter2"),
    ("PASSWORD: s3cr3t!", "s3cr3t!"),
    ("db_password=hunter2", "hunter2"),
    ("SECRET_KEY=django-insecure-abc", "django-insecure-abc"),
    ('app.config["SECRET_KEY"] = "q8Zr3Lw9XbT2mN5v"', "q8Zr3Lw9XbT2mN5v"),
    ("DB_PASSWORD=/Zt5Yx3Wv1Ut9Sr7Qp5On3Ml1", "Zt5Yx3Wv1Ut9Sr7Qp5On3Ml1"),  # base64 may start with /
    ("aws_secret_access_key = /K7MDENG/bPxRfiCYEXAMPLEKEYwJalrXUtnFE", "bPxRfiCYEXAMPLEKEYwJalrXUtnFE"),
])
def test_value_positions(text: str, secret: str) -> None:
    out = R.redact(text)
    assert secret not in out
    assert MARKER.search(out)
    assert R.redact(out) == out  # a marker (``url-password:7743f1`` reads as a pair) stays as it is


@pytest.mark.parametrize("text", [
    "password: str",
    "password: getpass()",
    "password = get_password(user)",
    "pwd: /home/ana/work",
    "PWD=/home/ana/proj2",  # env output: the working directory stays searchable
    "OLDPWD=/home/ana/.local/lib/python3.11/site-packages",
    "password: /run/secrets/db_password",
    "the secret key is kept in the vault",
    "secret_key = os.environ['SECRET_KEY']",
    "redis://cache:6379/0",
    "http://[::1]:8080/x",
    "the café3f9a1c2b4d5e6f708192a3b4c5d6e7f8091a2b3c commit",
    "déjà vu: AKIA is the AWS key prefix",
    "\\u00e9t\\u00e9 sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
])
def test_still_left_alone(text: str) -> None:
    assert R.redact(text) == text


def test_token_as_url_password_keeps_host_and_its_marker() -> None:
    """``token:`` before the password of a URL made the key-position rule take the value up to
    the end of the URL (host and path lost) under the kind ``token``: one secret, two markers."""
    token = TOKENS["github-token"]
    out = R.redact(f"git remote set-url origin https://x-access-token:{token}@github.com/org/repo.git")
    alone = R.redact(f"the token is {token}")
    assert out.endswith("@github.com/org/repo.git") and token not in out
    marker = alone.rsplit(" ", 1)[1]
    assert marker.startswith("[REDACTED:github-token:") and marker in out


def test_many_markers_and_findings_stay_linear() -> None:
    """Each finding was checked against every marker already in the text: 32,000 of each
    (1.3 MB, a re-redacted tool output) took minutes."""
    import time

    text = "[REDACTED:x:abcdef] password: hunter22 " * 32_000
    started = time.process_time()
    out = R.redact(text)
    assert time.process_time() - started < 5
    assert "hunter22" not in out and out.count("[REDACTED:x:abcdef]") == 32_000


@pytest.mark.parametrize("form", [
    '{"cmd": "\\u0073k-proj-Hq3Lm8Np2Rs6Tu0Vw4Xy7Za1Bc5De9Fg3Hj"}',            # its first letter escaped
    '{"cmd": "export KEY=sk-pr\\u006fj-Hq3Lm8Np2Rs6Tu0Vw4Xy7Za1Bc5De9Fg3Hj"}',   # one in the middle
    '{"a": "{\\"cmd\\": \\"\\\\u0073k-proj-Hq3Lm8Np2Rs6Tu0Vw4Xy7Za1Bc5De9Fg3Hj\\"}"}',  # JSON inside JSON
])
def test_token_split_by_json_escapes_is_found_whole(form: str) -> None:
    """A token written with ``\\u00XX`` escapes (a JSON writer may escape any character) is read
    as a JSON reader reads it: before, only the part before the escape, or nothing, was found
    and the rest of the token was stored. One marker, the plain token's, one at a time or in a batch."""
    token = "sk-proj-Hq3Lm8Np2Rs6Tu0Vw4Xy7Za1Bc5De9Fg3Hj"
    for out in (R.redact(form), R.redact_rows([(form,)], (0,))[0][0]):
        assert "Hq3Lm8Np2Rs6Tu0Vw4Xy7Za1Bc5De9Fg3Hj" not in out and "u0073k" not in out, out
        assert R.marker("openai-key", token) in out
    assert json.loads(R.redact('"caf\\u00e9 \\u0041\\u0042"')) == "café AB"  # other escapes stay as written


def test_truncated_private_key_inside_json_inside_json() -> None:
    """``head -3 key.pem`` (no END line) as a tool call's arguments, JSON inside JSON: its lines
    are joined by ``\\n``; the block stopped at the first one and every later line was stored."""
    pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1xyzQm9ndXNT\nWduYXR1cmVGb3JUZXN0aW5nT25seTEyMw"
    stored = json.dumps([{"function": {"arguments": json.dumps({"cmd": pem})}}])
    out = R.redact(stored)
    assert "WduYXR1cmVGb3JUZXN0aW5nT25seTEyMw" not in out and "MIIEpAIBAAKCAQEA" not in out, out
    assert json.loads(json.loads(out)[0]["function"]["arguments"])["cmd"].startswith("[REDACTED:private-key:")
