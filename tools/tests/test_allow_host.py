"""Per-host allowance: `--allow-host HOST[:PORT]` / RESEARCH_ENGINE_ALLOW_HOSTS lets exactly the named hosts
reach a private address; every other private address stays refused, metadata addresses always are, and the
allowance is recorded in run.json."""

from __future__ import annotations

import json

import pytest
import yaml
from engine_web import BRIEF, write_mini_web
from pytest_httpserver import HTTPServer

from research_engine import runrecord, trace, validate
from research_engine.corpus import CorpusServer
from research_engine.errors import BadInput
from research_engine.net import HttpClient, check_url
from research_engine.net.guard import METADATA_SOURCES, parse_allow_host
from research_engine.net.policy import allow_host_entries, fetch_policy
from research_engine.settings import Settings

ARTICLE = (
    "<html lang='en'><head><title>Threads and processes</title></head><body><article><h1>Threads</h1>"
    + "".join(
        f"<p>Paragraph {i} explains how the interpreter schedules concurrent work.</p>" for i in range(8)
    )
    + "</article></body></html>"
)


@pytest.fixture
def site():
    srv = HTTPServer(host="127.0.0.1", port=0)
    srv.start()
    srv.expect_request("/robots.txt").respond_with_data(
        "User-agent: *\nAllow: /\n", content_type="text/plain"
    )
    srv.expect_request("/article").respond_with_data(ARTICLE, content_type="text/html; charset=utf-8")
    yield srv
    srv.stop()


def named(*entries: str) -> list[tuple[str, int | None]]:
    return [parse_allow_host(e) for e in entries]


# ------------------------------------------------------------------------------------------- the guard


def test_exactly_the_named_host_and_port_may_reach_a_private_address():
    hosts = named("127.0.0.1:8377", "searx.lan")
    ok = check_url("http://127.0.0.1:8377/search?q=x", resolve=False, allow_hosts=hosts)
    assert ok.allowed and ok.private and ok.named
    assert not check_url("http://127.0.0.1:8378/", resolve=False, allow_hosts=hosts).allowed  # another port
    assert not check_url("http://127.0.0.2:8377/", resolve=False, allow_hosts=hosts).allowed  # another host
    assert not check_url("http://10.0.0.8/", resolve=False, allow_hosts=hosts).allowed
    # A named host name resolving to a private address is allowed on any port; other names are not.
    lan = check_url("http://searx.lan:8080/", allow_hosts=hosts, resolver=lambda h, p: ["192.168.1.5"])
    assert lan.allowed and lan.named
    assert not check_url(
        "http://other.lan/", allow_hosts=hosts, resolver=lambda h, p: ["192.168.1.5"]
    ).allowed
    # The same host written another way is the same host.
    assert check_url("http://2130706433:8377/", resolve=False, allow_hosts=hosts).allowed
    # A public host needs no allowance and is not marked named.
    assert not check_url("https://example.org/", resolve=False, allow_hosts=hosts).named


@pytest.mark.parametrize("address", sorted(METADATA_SOURCES))
def test_cloud_metadata_addresses_are_refused_whatever_is_allowed(address):
    shown = f"[{address}]" if ":" in address else address
    url = f"http://{shown}/latest/meta-data/"
    for verdict in (
        check_url(url, resolve=False),
        check_url(url, resolve=False, allow_private=True),
        check_url(url, resolve=False, allow_hosts=named(shown)),
    ):
        assert not verdict.allowed and "cloud-metadata" in (verdict.reason or ""), verdict.to_dict()
    assert METADATA_SOURCES[address].startswith("https://")


def test_azure_wireserver_is_refused_though_it_is_a_public_address():
    verdict = check_url("http://168.63.129.16/machine?comp=goalstate", resolve=False)
    assert not verdict.allowed and "cloud-metadata" in (verdict.reason or "")
    named_host = check_url("http://wire.example/", resolver=lambda h, p: ["168.63.129.16"])
    assert not named_host.allowed


@pytest.mark.parametrize("entry", ["", "http://x", "a b", "x:0", "x:99999", "::1", "[::1", "a/b", "u@h"])
def test_a_malformed_allow_host_is_bad_input(entry):
    with pytest.raises(BadInput) as caught:
        allow_host_entries([entry])
    assert caught.value.code == "bad-allow-host" and caught.value.exit_code == 2


def test_entries_are_normalized():
    assert allow_host_entries(["Example.ORG.", "example.org", "[0:0::1]:80", "127.1:8"]) == (
        "example.org",
        "[::1]:80",
        "127.0.0.1:8",
    )


# ------------------------------------------------------------------------------------------ the client


def test_a_redirect_from_an_allowed_host_to_another_private_host_is_refused(site):
    other = HTTPServer(host="127.0.0.1", port=0)
    other.start()
    try:
        other.expect_request("/secret").respond_with_data("secret", content_type="text/plain")
        site.expect_request("/hop").respond_with_data(
            "", status=302, headers={"Location": other.url_for("/secret")}
        )
        with HttpClient(allow_hosts=[f"127.0.0.1:{site.port}"], use_cache=False, max_retries=0) as client:
            assert client.get(site.url_for("/article")).ok
            hop = client.get(site.url_for("/hop"))
        assert not hop.ok and hop.error == "refused-ssrf" and "127.0.0.1" in (hop.error_detail or "")
        assert other.log == []
        assert [o["kind"] for o in client.overrides] == ["private-address"]
    finally:
        other.stop()


def test_the_environment_variable_allows_hosts_and_the_policy_combines_every_source(locked_run, site):
    settings = Settings.from_env({"RESEARCH_ENGINE_ALLOW_HOSTS": f" 127.0.0.1:{site.port} , searx.lan"})
    assert settings.allow_hosts == (f"127.0.0.1:{site.port}", "searx.lan")
    runrecord.note_allowed_hosts(locked_run, ["corpus.lan:8377"], command="test")
    policy = fetch_policy(settings, locked_run, allow_hosts=["Flag.Host"])
    assert policy.allow_hosts == ("flag.host", f"127.0.0.1:{site.port}", "searx.lan", "corpus.lan:8377")
    assert not policy.allow_private
    with policy.client() as client:
        assert client.get(site.url_for("/article")).ok
    assert "allow_hosts" not in json.dumps(
        settings.public()
    )  # machine opt-ins are not replayed from settings


# ----------------------------------------------------------------------------------------------- the CLI


def test_fetch_with_allow_host_records_the_allowance_in_run_json(locked_run, site, cli):
    from research_engine import decompose

    decompose.add(locked_run, "How do threads work?", "technical")
    url = site.url_for("/article")
    code, _, _, env = cli("fetch", url, "--run", locked_run.root, "--sq", "SQ-01", "--json")
    assert (
        code == 3
        and env["errors"][0]["code"] == "refused-ssrf"
        and "--allow-host" in env["errors"][0]["message"]
    )
    code, out, _, env = cli(
        "fetch",
        url,
        "--run",
        locked_run.root,
        "--sq",
        "SQ-01",
        "--allow-host",
        f"127.0.0.1:{site.port}",
        "--json",
    )
    assert code == 0, out
    record = runrecord.read(locked_run)
    assert record["allow_hosts"] == [f"127.0.0.1:{site.port}"] and record["allow_private"] is False
    kinds = [e["kind"] for e in record["events"]]
    assert "allow-host" in kinds and "private-address" in kinds
    # The run now reaches that host for every later command, the verifier's independent re-fetch included.
    from research_engine import claims, verify

    quote = "Paragraph 1 explains how the interpreter schedules concurrent work."
    claims.add_claim(locked_run, "SQ-01", quote, ["SQ-01/SRC-01"], [quote])
    assert verify.prepare(locked_run)["claims"][0]["floor"] == "supported"
    assert validate.validate_run(locked_run).ok


def test_a_malformed_allow_host_on_the_cli_exits_2(locked_run, cli):
    code, _, _, env = cli("url", "check", "http://127.0.0.1:9/", "--allow-host", "http://x", "--json")
    assert code == 2 and env["errors"][0]["code"] == "bad-allow-host"
    code, _, _, _ = cli("url", "check", "http://127.0.0.1:9/", "--no-resolve", "--allow-host", "127.0.0.1:9")
    assert code == 0


@pytest.mark.slow
def test_a_run_with_a_local_searxng_needs_only_its_host(tmp_path, monkeypatch, cli):
    with CorpusServer(write_mini_web(tmp_path / "web")) as server:
        monkeypatch.setenv("SEARXNG_URL", server.url)
        brief = tmp_path / "brief.yaml"
        brief.write_text(yaml.safe_dump({**BRIEF, "output_path": str(tmp_path / "runs")}), encoding="utf-8")
        host = server.url.removeprefix("http://")
        code, out, _, env = cli("run", str(brief), "--sources", "web", "--allow-host", host, "--json")
    assert code == 0, out
    run = trace.open_run(env["data"]["run_root"])
    record = runrecord.read(run)
    assert record["allow_hosts"] == [host] and record["allow_private"] is False
    assert env["data"]["figures"]["sources"] >= 4
    assert validate.validate_run(run).ok
