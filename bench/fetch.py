"""Fetch benchmark: many pages over several local hosts with injected latency, politeness on.

    .venv/bin/python bench/fetch.py [--hosts 4] [--pages 20] [--interval 0.1] [--latency 0.05]

Starts one threaded HTTP server per host on distinct loopback addresses (127.0.0.2, 127.0.0.3, ...),
each answering /robots.txt and /page/N after `--latency` seconds with an ETag, and honouring
If-None-Match with 304. Then:

1. cold run: one HttpClient fetches every page with `get_many`; wall time is compared with the
   minimum the politeness rules allow: per host, requests (pages + robots.txt) start at least
   `interval` apart and at most `per_host_concurrency` run at once, and at most
   `global_concurrency` run overall, so

       minimum = max over hosts of max((n - 1) * interval + latency, ceil(n / per_host) * latency)
                 and total_requests * latency / global_concurrency

2. warm run: a new client on the same cache directory fetches everything again; the servers count
   full (200) downloads, which must be zero (every answer a 304 revalidation).

Traffic stays on loopback. Goal: cold wall time within 1.2x of the minimum.
"""

from __future__ import annotations

import argparse
import logging
import math
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))

from research_engine.net import HttpClient  # noqa: E402

PAGE = (
    "<html><head><title>Page {n}</title></head><body>"
    + "<p>Benchmark text for page {n}.</p>" * 20
    + "</body></html>"
)


def make_server(address: str, latency: float) -> tuple[ThreadingHTTPServer, dict[str, int]]:
    counts = {"full": 0, "not_modified": 0}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:
            pass

        def do_GET(self) -> None:
            time.sleep(latency)
            etag = f'"{self.path}"'
            if self.headers.get("If-None-Match") == etag:
                with lock:
                    counts["not_modified"] += 1
                self.send_response(304)
                self.send_header("ETag", etag)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if self.path == "/robots.txt":
                body, kind = b"User-agent: *\nDisallow: /private\n", "text/plain"
            else:
                body, kind = PAGE.format(n=self.path.rsplit("/", 1)[-1]).encode(), "text/html; charset=utf-8"
            with lock:
                counts["full"] += 1
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("ETag", etag)
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer((address, 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=4)
    parser.add_argument("--pages", type=int, default=20, help="pages per host")
    parser.add_argument("--interval", type=float, default=0.1, help="per-host minimum interval (s)")
    parser.add_argument("--latency", type=float, default=0.05, help="injected server latency (s)")
    parser.add_argument("--per-host", type=int, default=2)
    parser.add_argument("--global-limit", type=int, default=8)
    args = parser.parse_args()
    logging.getLogger("research_engine").setLevel(logging.ERROR)

    servers = [make_server(f"127.0.0.{i + 2}", args.latency) for i in range(args.hosts)]
    urls = [
        f"http://127.0.0.{i + 2}:{srv.server_address[1]}/page/{n}"
        for n in range(args.pages)
        for i, (srv, _) in enumerate(servers)
    ]
    per_host_requests = args.pages + 1  # the pages plus robots.txt
    minimum = max(
        (per_host_requests - 1) * args.interval + args.latency,
        math.ceil(per_host_requests / args.per_host) * args.latency,
        args.hosts * per_host_requests * args.latency / args.global_limit,
    )
    options = dict(
        allow_private=True,
        per_host_interval=args.interval,
        per_host_concurrency=args.per_host,
        global_concurrency=args.global_limit,
    )
    with tempfile.TemporaryDirectory() as cache:
        with HttpClient(cache_dir=cache, **options) as client:
            started = time.monotonic()
            cold = client.get_many(urls)
            cold_wall = time.monotonic() - started
        cold_full = sum(c["full"] for _, c in servers)
        for _, counts in servers:
            counts.update(full=0, not_modified=0)
        with HttpClient(cache_dir=cache, **options) as client:
            started = time.monotonic()
            warm = client.get_many(urls)
            warm_wall = time.monotonic() - started
        warm_full = sum(c["full"] for _, c in servers)
        warm_304 = sum(c["not_modified"] for _, c in servers)
    for srv, _ in servers:
        srv.shutdown()

    failed = [r for r in cold + warm if not r.ok]
    ratio = cold_wall / minimum
    print(
        f"hosts={args.hosts} pages/host={args.pages} interval={args.interval}s latency={args.latency}s "
        f"per-host={args.per_host} global={args.global_limit}"
    )
    print(
        f"cold: {len(cold)} pages in {cold_wall:.3f}s; politeness minimum {minimum:.3f}s; ratio {ratio:.2f}x "
        f"(goal <= 1.20x); full downloads {cold_full}"
    )
    print(
        f"warm: {len(warm)} pages in {warm_wall:.3f}s; full downloads {warm_full}; "
        f"304 revalidations {warm_304}; "
        f"from_cache {sum(r.from_cache for r in warm)}/{len(warm)}"
    )
    if failed:
        print(f"FAILED fetches: {len(failed)}: {failed[0].error} {failed[0].error_detail}")
    ok = not failed and ratio <= 1.2 and warm_full == 0
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
