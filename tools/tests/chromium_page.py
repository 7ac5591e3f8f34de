"""Headless Chromium (Debian's package) reading a page as a person would: the DOM after load, a screenshot.

`open_page` loads a COPY of the page with one probe script appended (the page itself has no script): the
probe measures where the deliverable's first paragraph sits in a 1280x800 window and writes it into the
DOM, which `--dump-dom` then prints. Screenshots land in the test's tmp directory and, when
RESEARCH_ENGINE_SCREENSHOT_DIR is set, are copied there (CI keeps them as the test's artifacts).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest

PROBE_ID = "test-probe"
# Where the answer's first paragraph is on the first screen; written into the DOM for --dump-dom.
PROBE = f"""<script id="{PROBE_ID}">
addEventListener("load", () => {{
  const first = document.querySelector("section.deliverable p");
  const box = first ? first.getBoundingClientRect() : null;
  document.documentElement.setAttribute("data-answer-top", box ? String(Math.round(box.top)) : "none");
  document.documentElement.setAttribute("data-viewport", innerWidth + "x" + innerHeight);
}});
</script>"""


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI must install chromium (Debian's package) for the trace viewer tests")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return found


def _flags(profile: Path) -> list[str]:
    return [
        chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
    ]


class Dom(HTMLParser):
    """What a reader sees: visible text, ids, internal link targets, every href and tag."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.links: list[str] = []
        self.hrefs: list[str] = []
        self.tags: list[str] = []
        self.scripts: list[str | None] = []
        self.attrs: dict[str, str] = {}
        self.text: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        attrs = dict(attrs)
        if tag == "html":
            self.attrs = {k: v or "" for k, v in attrs.items()}
        if tag == "script":
            self.scripts.append(attrs.get("id"))
        if "id" in attrs:
            self.ids.append(attrs["id"])
        if tag == "a" and "href" in attrs:
            self.hrefs.append(attrs["href"] or "")
            if (attrs["href"] or "").startswith("#"):
                self.links.append(attrs["href"][1:])
        if tag in ("style", "title", "script"):
            self._skip += 1

    def handle_endtag(self, tag):
        if tag in ("style", "title", "script"):
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.text.append(data)

    @property
    def visible(self) -> str:
        return " ".join(" ".join(self.text).split())


def read(html_text: str) -> Dom:
    dom = Dom()
    dom.feed(html_text)
    return dom


@dataclass
class Seen:
    dom: Dom
    screenshot: Path
    html: str = field(repr=False)


def open_page(page: Path, work: Path, name: str) -> Seen:
    """Load `page` (a copy with the probe) at 1280x800: the DOM after load and a first-screen screenshot."""
    work.mkdir(parents=True, exist_ok=True)
    probed = work / f"{name}.probed.html"
    text = page.read_text(encoding="utf-8")
    probed.write_text(text.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    flags = _flags(work / f"{name}-profile")
    done = subprocess.run(
        [*flags, "--window-size=1280,800", "--dump-dom", probed.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    shot = work / f"{name}.png"
    subprocess.run(
        [*flags, f"--screenshot={shot}", "--window-size=1280,800", page.as_uri()],
        capture_output=True,
        timeout=120,
        check=True,
    )
    keep = os.environ.get("RESEARCH_ENGINE_SCREENSHOT_DIR")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / shot.name)
    return Seen(read(done.stdout), shot, done.stdout)


def assert_reads_cleanly(seen: Seen) -> None:
    """The checks every page passes: links resolve, nothing escaped twice, no active content from a source,
    the answer on the first screen."""
    dom = seen.dom
    assert len(dom.ids) == len(set(dom.ids)), "an id is used twice"
    dangling = sorted({link for link in dom.links if link not in dom.ids})
    assert not dangling, f"internal links without a target: {dangling}"
    for href in dom.hrefs:
        assert href.startswith(("#", "http://", "https://")), f"a link that is not web or internal: {href}"
    # Escaped twice shows as an entity in the visible text ("&lt;" where "<" was meant).
    assert "&lt;" not in dom.visible and "&amp;" not in dom.visible and "&gt;" not in dom.visible
    assert dom.scripts == [PROBE_ID], f"a script other than the test's probe: {dom.scripts}"
    assert not {"img", "iframe", "object", "embed", "link"} & set(dom.tags)
    # --dump-dom lays the page out in a 1280-wide window whose inner height is less than 800 (about 660):
    # a paragraph that starts inside it is on the first screen of a 1280x800 window.
    width, _, height = dom.attrs.get("data-viewport", "0x0").partition("x")
    assert width == "1280", dom.attrs
    top = dom.attrs.get("data-answer-top")
    on_screen = top not in (None, "none") and 0 <= int(top) < min(int(height), 800) - 60
    assert on_screen, f"the answer's first paragraph is at {top}px"
    assert seen.screenshot.stat().st_size > 10_000
