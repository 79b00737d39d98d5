"""Planted secrets (realistic formats, invented values) and the text that carries each.

``PLANTED`` maps a kind to ``(text, secret)``: ``text`` is how the secret shows up in a
transcript, ``secret`` the bytes that must be found nowhere once stored.
"""

from __future__ import annotations

PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7Qz4mP9wXvLk2"
PLANTED: dict[str, tuple[str, str]] = {
    "aws-access-key-id": ("aws configure: key AKIAQ3EGRTXMPL4Z7K2V set", "AKIAQ3EGRTXMPL4Z7K2V"),
    "aws-secret-key": ("aws_secret_access_key = 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",
                       "Tq9xW2mZ8vK4nR7pL1sY5uH3jB6cF0dG2aE8iO4w"),
    "gcp-service-account": ('{"type": "service_account", "private_key_id": "4f1c", "private_key": '
                            '"-----BEGIN PRIVATE KEY-----\\n' + PEM_BODY + '\\n-----END PRIVATE KEY-----\\n"}',
                            PEM_BODY),
    "azure": ("DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=q8Zr3Lw9XbT2mN5vK7pQ1sD4fG6hJ0kL"
              "8aW2eR4tY6uI9oP3zX5cV7bN1mQ==;EndpointSuffix=core.windows.net",
              "q8Zr3Lw9XbT2mN5vK7pQ1sD4fG6hJ0kL8aW2eR4tY6uI9oP3zX5cV7bN1mQ=="),
    "openai": ("export OPENAI_API_KEY=sk-proj-R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3sOnlyXyZ",
               "sk-proj-R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3sOnlyXyZ"),
    "openai-legacy": ("use sk-Zq8Lm3Np5Rt7Vx9Bz1Cd3Fg5Hj7Kl9Mn2Pq4 for the call", "sk-Zq8Lm3Np5Rt7Vx9Bz1Cd3Fg5Hj7Kl9Mn2Pq4"),
    "anthropic": ("key sk-ant-api03-Wq2Er4Ty6Ui8Op0As2Df4Gh6Jk8Lz0Xc2Vb4Nm6Qw8Er0Ty2Ui4-Op6AsAA ok",
                  "sk-ant-api03-Wq2Er4Ty6Ui8Op0As2Df4Gh6Jk8Lz0Xc2Vb4Nm6Qw8Er0Ty2Ui4-Op6AsAA"),
    "google": ("maps key AIzaSyD4Fg7Hj9Kl2Mn5Pq8Rs1Tu4Vw7Xy0Za3B in the config", "AIzaSyD4Fg7Hj9Kl2Mn5Pq8Rs1Tu4Vw7Xy0Za3B"),
    "huggingface": ("HF token 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 here", "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"),
    "stripe": ("stripe.api_key = 'sk_live_51Hx2Ky3Lz4Mw5Nv6Ou7Pt8Qs9Rr0'", "sk_live_51Hx2Ky3Lz4Mw5Nv6Ou7Pt8Qs9Rr0"),
    "stripe-restricted": ("restricted rk_live_51Ab2Cd3Ef4Gh5Ij6Kl7Mn8Op9Qr", "rk_live_51Ab2Cd3Ef4Gh5Ij6Kl7Mn8Op9Qr"),
    "slack": ("SLACK_BOT_TOKEN is xoxb-2401234567-5123456789012-AbCdEfGhIjKlMnOpQrStUvWx",
              "xoxb-2401234567-5123456789012-AbCdEfGhIjKlMnOpQrStUvWx"),
    "slack-webhook": ("post to https://hooks.slack.com/services/T01ABCDEF/B02GHIJKL/Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2",
                      "T01ABCDEF/B02GHIJKL/Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2"),
    "github": ("git clone with ghp_R2d2C3p0Bb8Yoda4Luke6Leia8Han0Solo2Xy", "ghp_R2d2C3p0Bb8Yoda4Luke6Leia8Han0Solo2Xy"),
    "github-pat": ("GH=github_pat_11ABCDEFG0aBcDeFgHiJkL_MnOpQrStUvWxYz0123456789AbCdEfGhIjKlMnOpQrStUv",
                   "github_pat_11ABCDEFG0aBcDeFgHiJkL_MnOpQrStUvWxYz0123456789AbCdEfGhIjKlMnOpQrStUv"),
    "gitlab": ("CI uses glpat-Xy7Zw9Vu1Ts3Rq5Po7Nm", "glpat-Xy7Zw9Vu1Ts3Rq5Po7Nm"),
    "jwt": ("session eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhbmEiLCJleHAiOjE5MDAwMDAwMDB9."
            "Qm9ndXNTaWduYXR1cmVGb3JUZXN0aW5nT25seTEyMw",
            "eyJzdWIiOiJhbmEiLCJleHAiOjE5MDAwMDAwMDB9.Qm9ndXNTaWduYXR1cmVGb3JUZXN0aW5nT25seTEyMw"),
    "pem": ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtz\n"
            "c2gtZWQyNTUxOQAAACBmZWVkZmFjZWRlYWRiZWVmY2FmZWJhYmUwMTIzNDU2Nzg5\n"
            "-----END OPENSSH PRIVATE KEY-----", "c2gtZWQyNTUxOQAAACBmZWVkZmFjZWRlYWRiZWVmY2FmZWJhYmUwMTIzNDU2Nzg5"),
    "url-password": ("DATABASE_URL=postgresql://deploy:Vq7!xP2@Lm9@db.internal:5432/app",
                     "Vq7!xP2"),
    "url-password-2": ("fetch https://bob:Kr8zTq3Wm5@git.example.org/repo.git", "Kr8zTq3Wm5"),
    "bearer": ("curl -H 'Authorization: Bearer 7f3Kq9Lm2Np4Rs6Tu8Vw0Xy1Za3Bc5De7Fg'",
               "7f3Kq9Lm2Np4Rs6Tu8Vw0Xy1Za3Bc5De7Fg"),
    "basic": ("Authorization: Basic ZGVwbG95OlN1cDNyUzNjcjN0UGFzcw==", "ZGVwbG95OlN1cDNyUzNjcjN0UGFzcw=="),
    "env-password": ("DB_PASSWORD=hunter2isnotsafe", "hunter2isnotsafe"),
    "json-token": ('{"api_token": "Zt5Yx3Wv1Ut9Sr7Qp5On3Ml1"}', "Zt5Yx3Wv1Ut9Sr7Qp5On3Ml1"),
    "yaml-secret": ("client_secret: 9dK2mQ7vX4pL8sR1tW6yZ3", "9dK2mQ7vX4pL8sR1tW6yZ3"),
    "openai-after-cjk": ("我的密钥sk-proj-Hq3Lm8Np2Rs6Tu0Vw4Xy7Za1Bc5De9Fg3Hj请保密", "Hq3Lm8Np2Rs6Tu0Vw4Xy7Za1Bc5De9Fg3Hj"),
    "env-file-in-json": ('{"file_path": ".env", "content": "DEBUG=1\\nDB_PASSWORD=walrusbatterystaple\\n"}',
                         "walrusbatterystaple"),
    "redis-no-user": ("REDIS_URL=redis://:Pz4Wq8Lm2Nr6@cache.internal:6379/0", "Pz4Wq8Lm2Nr6"),
    "codex-git-url": ("https://x-access-token:ghs_Tq9xW2mZ8vK4nR7pL1sY5uH3jB6cF0dG2aE8@github.com/o/r.git",
                      "ghs_Tq9xW2mZ8vK4nR7pL1sY5uH3jB6cF0dG2aE8"),
}

# What must stay as it is (and searchable): no marker may appear in these.
HARMLESS: tuple[str, ...] = (
    "commit 3f9a1c2b4d5e6f708192a3b4c5d6e7f8091a2b3c fixes the loader",
    "Merge: 9fceb02 e2d1a4b",
    "request id 123e4567-e89b-12d3-a456-426614174000 failed",
    "sha256sum: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  empty.txt",
    "md5 d41d8cd98f00b204e9800998ecf8427e",
    "img data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    "token = get_token(request)",
    "self.token = token",
    "max_tokens: 4096",
    "password: str = Field(..., min_length=8)",
    "def reset_password(user, new_password):",
    "PASSWD = getpass.getpass('IMAP password: ')",
    "if not api_key:\n    raise ValueError('set OPENAI_API_KEY')",
    "export OPENAI_API_KEY=$OPENAI_API_KEY",
    "password = os.environ['DB_PASSWORD']",
    "The tokenizer splits text into tokens; the secret to speed is batching.",
    "access_token = response.json()['access_token']",
    "see https://github.com/NousResearch/hermes-agent/blob/main/README.md",
    "postgresql://localhost:5432/app",
    "ssh git@github.com:org/repo.git",
    "the task-id is sk-learn-pipeline",
    "hf_hub_download(repo_id='gpt2')",
    "AKIA is the prefix of AWS access keys",
    "Authorization header missing",
    "Bearer authentication is described in RFC 6750",
    "const secretKey = process.env.SECRET_KEY;",
    "docker run -e POSTGRES_PASSWORD=${POSTGRES_PASSWORD} postgres",
    "uuid4().hex -> 9f1c2d3e4b5a69788796a5b4c3d2e1f0",
    "git log --format=%H | head -1 => 0123456789abcdef0123456789abcdef01234567",
    "class TokenBucket:\n    def __init__(self, rate: float):",
)
