"""Keys and URLs: checked when a system is built, and never written anywhere.

A bad key or URL is an InputError naming the option or environment variable (never the value);
credentials in a URL and the key itself are redacted from cards, errors and raw bodies, even
when a server echoes them back (servers on 127.0.0.1 that echo the Authorization header).
"""

from __future__ import annotations

import base64
import json
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from typer.testing import CliRunner

from twinbench.builder import write_benchmark
from twinbench.cli import app
from twinbench.jsonl import InputError
from twinbench.records import ChoiceQuestion, Item
from twinbench.systems import SystemOptions, make_system
from twinbench.systems.base import Request

from .servers import Hit, chat_reply, send, serve_raw

ITEMS = Path(__file__).resolve().parents[2] / "src" / "twinbench" / "examples" / "items.jsonl"
HTTP_SYSTEMS = ["openai", "jev", "laya", "typed-decisions"]
ENV = "TWINBENCH_TEST_KEY"
TEAMS = ChoiceQuestion(instructions="Which team?", options=["billing", "sales"])
#: a valid key of an unusual shape: JSON and URL metacharacters, a quote, a backslash
ODD_KEY = 'sk-"odd\\key%2F+/=:@?#~!' + "Z" * 40
BAD_KEYS = {
    "trailing newline": "sk-live-123456\n",
    "trailing space": "sk-live-123456 ",
    "leading space": " sk-live-123456",
    "inner newline": "sk-live\n123456",
    "non-ASCII": "sk-live-12345\u00e9",
    "control character": "sk-live-\x1b123456",
}


@pytest.mark.parametrize("spec", HTTP_SYSTEMS)
@pytest.mark.parametrize("name", list(BAD_KEYS))
def test_a_bad_key_is_refused_when_the_system_is_built(
    spec: str, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = BAD_KEYS[name]
    monkeypatch.setenv(ENV, key)
    options = SystemOptions(base_url="http://127.0.0.1:9", api_key_env=ENV)
    with pytest.raises(InputError) as caught:
        make_system(spec, options)
    message = str(caught.value)
    assert ENV in message and "\n" not in message
    assert key not in message and key.strip() not in message


@pytest.mark.parametrize("value", [None, ""])
def test_an_unset_or_empty_key_names_the_variable(
    value: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if value is None:
        monkeypatch.delenv(ENV, raising=False)
    else:
        monkeypatch.setenv(ENV, value)
    with pytest.raises(InputError, match=ENV):
        make_system("openai", SystemOptions(base_url="http://127.0.0.1:9", api_key_env=ENV))


BAD_URLS = [
    "notaurl",
    "localhost:8000",
    "ftp://127.0.0.1/v1",
    "http://",
    "http:///v1",
    "http://127.0.0.1:99999",
    "http://127.0.0.1:port",
    "http://exa mple.com",
]


@pytest.mark.parametrize("spec", HTTP_SYSTEMS)
@pytest.mark.parametrize("url", BAD_URLS)
def test_a_bad_base_url_is_refused_when_the_system_is_built(spec: str, url: str) -> None:
    with pytest.raises(InputError, match="--base-url"):
        make_system(spec, SystemOptions(base_url=url))


@pytest.mark.parametrize(
    "url",
    [
        "ftp://u:SECRET-PW@127.0.0.1/v1",
        "u:SECRET-PW@127.0.0.1",
        "http://u:SECRET-PW@",
        "notaurl?key=SECRET-PW",
        "http://127.0.0.1:port?token=SECRET-PW",
    ],
)
def test_a_bad_base_url_message_shows_no_credentials(url: str) -> None:
    with pytest.raises(InputError, match="--base-url") as caught:
        make_system("openai", SystemOptions(base_url=url))
    assert "SECRET" not in str(caught.value)


def test_a_bad_base_url_in_the_cli_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        ["run", "-b", str(ITEMS), "-s", "jev", "-o", str(tmp_path / "r"), "--base-url", "x"],
    )
    assert result.exit_code == 2, result.output
    assert result.output.count("\n") == 1 and "--base-url" in result.output
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("arg", ["5", "-0.1", "nan", "high"])
def test_laya_threshold_outside_0_1_is_refused(arg: str) -> None:
    with pytest.raises(InputError, match=r"\[0, 1\]"):
        make_system(f"laya:{arg}", SystemOptions(base_url="http://127.0.0.1:9"))


def _echo(handler: BaseHTTPRequestHandler, hit: Hit) -> None:
    """401 with the Authorization header and the full URL echoed, as some proxies do."""
    body = {"error": f"bad credentials {hit.headers.get('Authorization')} for {hit.path}"}
    send(handler, 401, json.dumps(body).encode())


def test_key_params_are_stripped_from_the_card_but_still_sent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(ENV, ODD_KEY)
    with serve_raw(_echo) as (url, hits):
        base = f"{url}/v1?api_key=Q-secret-88&region=eu"
        system = make_system("openai", SystemOptions(base_url=base, api_key_env=ENV, retries=0))
        out = system.respond([Request(item_id="a", state="x", question=TEAMS)])
    card = system.card.model_dump_json()
    assert "Q-secret-88" not in card
    assert f"{url}/v1/chat/completions?api_key=[redacted]&region=eu" in card
    # the server still got the query key and the Bearer key
    assert hits[0].path == "/v1/chat/completions?api_key=Q-secret-88&region=eu"
    assert hits[0].headers["Authorization"] == f"Bearer {ODD_KEY}"
    row = out[0].model_dump_json()
    assert out[0].status == "error" and "HTTP 401" in (out[0].error or "")
    for secret in ("Q-secret-88", ODD_KEY, json.dumps(ODD_KEY)[1:-1]):
        assert secret not in row
    assert "Bearer [redacted]" in (out[0].error or "")


def test_url_credentials_are_sent_as_basic_auth_and_redacted() -> None:
    def echo_basic(handler: BaseHTTPRequestHandler, hit: Hit) -> None:
        seen = hit.headers.get("Authorization")
        send(handler, 403, json.dumps({"seen": seen, "url": f"http://ann:pw@{hit.path}"}).encode())

    with serve_raw(echo_basic) as (url, hits):
        base = url.replace("http://", "http://ann:Basic-pw-99@")
        system = make_system("jev", SystemOptions(base_url=base, retries=0))
        out = system.respond([Request(item_id="a", state="x", question=TEAMS)])
    encoded = base64.b64encode(b"ann:Basic-pw-99").decode()
    assert hits[0].headers["Authorization"] == f"Basic {encoded}"
    assert out[0].status == "error" and "HTTP 403" in (out[0].error or "")
    row = out[0].model_dump_json() + system.card.model_dump_json()
    assert encoded not in row and "Basic-pw-99" not in row


def test_url_credentials_and_a_key_together_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "sk-live-123456")
    options = SystemOptions(base_url="http://u:pw-77@127.0.0.1:9", api_key_env=ENV)
    with pytest.raises(InputError, match="--base-url") as caught:
        make_system("openai", options)
    assert "pw-77" not in str(caught.value) and "sk-live" not in str(caught.value)


#: what an echoing server does with the Authorization header, one mode per request
ECHO_MODES = [
    "401 json",
    "400 text",
    "500 json",
    "200 content",
    "200 not json",
    "200 escaped",
    "200 ok",
]


def _echo_everywhere(handler: BaseHTTPRequestHandler, hit: Hit) -> None:
    header = hit.headers.get("Authorization", "")
    state = hit.body["messages"][1]["content"]
    mode = ECHO_MODES[sum(map(ord, state)) % len(ECHO_MODES)]
    if mode == "401 json":
        send(handler, 401, json.dumps({"error": {"message": f"invalid key {header}"}}).encode())
    elif mode == "400 text":
        send(handler, 400, f"rejected {header} {hit.path}".encode())
    elif mode == "500 json":
        body = json.dumps({"detail": header}).encode()
        send(handler, 500, body)
    elif mode == "200 content":
        send(handler, 200, json.dumps(chat_reply(f"my key is {header}")).encode())
    elif mode == "200 not json":
        send(handler, 200, f"<html>{header}</html>".encode())
    elif mode == "200 escaped":
        # every character \u-escaped: the key is in the body only once the JSON is parsed
        escaped = "".join(f"\\u{ord(c):04x}" for c in header)
        text = json.dumps(chat_reply("PLACEHOLDER")).replace("PLACEHOLDER", escaped)
        send(handler, 200, text.encode())
    else:
        answer = {"abstain": True, "reason": "underspecified_state", "answer": None}
        send(handler, 200, json.dumps(chat_reply(json.dumps(answer))).encode())


URL_PASSWORD = "URLPW" * 4
QUERY_KEY = "QKEY-" * 4


@pytest.mark.parametrize(
    ("key", "userinfo"),
    [(ODD_KEY, ""), (None, f"user:{URL_PASSWORD}@"), ("k" * 8 + "-\u00e9\n", "")],
    ids=["odd key", "url credentials", "unsendable key"],
)
def test_a_real_run_writes_the_secrets_nowhere(
    key: str | None, userinfo: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    bench = root / "benchmark"
    items = [Item.model_validate(json.loads(line)) for line in ITEMS.read_text().splitlines()]
    write_benchmark(bench, items, [], {"seed": 0, "generators": [], "ratio": {}})
    out = root / "runs" / "openai"
    with serve_raw(_echo_everywhere) as (url, hits):
        base = url.replace("http://", "http://" + userinfo) + f"/v1?key={QUERY_KEY}"
        args = ["run", "-b", str(bench), "-s", "openai", "-o", str(out), "--base-url", base]
        args += ["--timeout", "5", "--max-error-rate", "1"]  # its rows are meant to fail
        if key is not None:
            monkeypatch.setenv(ENV, key)
            args += ["--api-key-env", ENV]
        result = CliRunner().invoke(app, args)
    secrets = {URL_PASSWORD, QUERY_KEY, base64.b64encode(f"user:{URL_PASSWORD}".encode()).decode()}
    if key is not None:
        secrets |= {key, key.strip(), json.dumps(key)[1:-1]}
    for secret in secrets:
        assert secret not in result.output
    if key is not None and key != ODD_KEY:  # a key no header can carry: one line, exit 2
        assert result.exit_code == 2 and ENV in result.output, result.output
        assert result.output.count("\n") == 1 and not hits and not out.exists()
        return
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (out / "responses.jsonl").read_text().splitlines()]
    modes = {ECHO_MODES[sum(map(ord, h.body["messages"][1]["content"])) % 7] for h in hits}
    assert len(rows) == 12 and len(modes) >= 5, modes  # the echo reached most failure paths
    assert {r["status"] for r in rows} >= {"error", "invalid", "rejected"}
    # a second run, then a report and a comparison of both: all they write is grepped too
    other = root / "runs" / "abstain"
    runner = CliRunner()
    second = runner.invoke(app, ["run", "-b", str(bench), "-s", "always-abstain", "-o", str(other)])
    assert second.exit_code == 0, second.output
    assert runner.invoke(app, ["report", str(root)]).exit_code == 0
    compared = runner.invoke(app, ["compare", str(out), str(other), "--out", str(root / "cmp")])
    # no row of the echoing server is valid: compare refuses, naming the statuses only
    assert compared.exit_code == 2 and "nothing to compare" in compared.output
    assert not any(secret in compared.output for secret in secrets)
    files = [p for p in root.rglob("*") if p.is_file() and "benchmark" not in p.parts]
    assert {p.name for p in files} >= {
        "run.json",
        "responses.jsonl",
        "metrics.json",
        "report.md",
        "report.html",
    }
    for path in files:
        text = path.read_text("utf-8")
        for secret in secrets:
            assert secret not in text, (path.name, secret)
    assert "[redacted]" in (out / "responses.jsonl").read_text()
