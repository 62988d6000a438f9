"""A real inference engine on this machine: llama.cpp's ``llama-server`` with a random model.

    python benchmarks/llama_server.py build              # idempotent; prints the binary
    python benchmarks/llama_server.py model              # idempotent; prints the .gguf
    python benchmarks/llama_server.py serve --slots 4    # prints the base URL, serves

The ``llama-cpp-python`` sdist on PyPI (pinned below) vendors the whole llama.cpp tree;
``build`` downloads it with pip, builds only ``llama-server`` (Release, no curl or OpenSSL,
no web UI download, portable: no ``-march=native``) and caches it under
``~/.cache/fairstream/llama.cpp/<version>/`` (``FAIRSTREAM_CACHE`` moves the root).
``model`` writes a llama-architecture GGUF with seeded random weights through the vendored
``gguf-py``: a byte-level BPE vocabulary (256 byte tokens, one merge, BOS/EOS) and output rows
steered toward printable bytes and away from EOS, so a generation runs to ``max_tokens``.
Default size: embedding 1024, 12 layers, f16, about 136M parameters; 2 CPU threads decode
it in roughly 15-25 ms a step, slow enough for batching to show and fast enough for tests.

Importable: :func:`build`, :func:`make_model`, :class:`LlamaServer` (tests and benchmarks).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

VERSION = "0.3.36"  # llama-cpp-python sdist: vendors llama.cpp, tools/server and gguf-py
MODEL_NAME = "random-llama"


def cache_dir(version: str = VERSION) -> Path:
    root = Path(os.environ.get("FAIRSTREAM_CACHE", Path.home() / ".cache" / "fairstream"))
    return root / "llama.cpp" / version


def binary_path(version: str = VERSION) -> Path:
    return cache_dir(version) / "bin" / "llama-server"


def _log(msg: str) -> None:
    print(f"[llama_server] {msg}", file=sys.stderr, flush=True)


def _source(version: str) -> Path:
    """The vendored llama.cpp tree of the sdist, downloaded and unpacked once."""
    src = cache_dir(version) / "src"
    if (src / "CMakeLists.txt").exists() and (src / "gguf-py").exists():
        return src
    with tempfile.TemporaryDirectory() as tmp:
        _log(f"downloading the llama-cpp-python {version} sdist (pip)")
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary",
             ":all:", f"llama-cpp-python=={version}", "-d", tmp],
            check=True,
        )  # fmt: skip
        (archive,) = Path(tmp).glob("llama_cpp_python-*.tar.gz")
        prefix = f"llama_cpp_python-{version}/vendor/llama.cpp/"
        staging = Path(tmp) / "x"
        with tarfile.open(archive) as tar:
            members = [m for m in tar.getmembers() if m.name.startswith(prefix)]
            for m in members:
                m.name = m.name[len(prefix) :]
            tar.extractall(staging, members=[m for m in members if m.name], filter="data")
        if src.exists():
            shutil.rmtree(src)
        src.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(staging), src)
    return src


def build(version: str = VERSION, jobs: int | None = None) -> Path:
    """``llama-server``, built once per version (idempotent); its path."""
    binary = binary_path(version)
    if binary.exists():
        return binary
    if shutil.which("cmake") is None or shutil.which("g++") is None:
        raise RuntimeError("building llama.cpp needs cmake and g++ (apt-get install cmake g++)")
    src = _source(version)
    work = cache_dir(version) / "build"
    flags = [
        "-DCMAKE_BUILD_TYPE=Release",
        "-DGGML_NATIVE=OFF",  # portable: the cache may move to another CPU type
        "-DLLAMA_CURL=OFF",
        "-DLLAMA_OPENSSL=OFF",
        "-DLLAMA_BUILD_TESTS=OFF",
        "-DLLAMA_BUILD_EXAMPLES=OFF",
        "-DLLAMA_BUILD_APP=OFF",
        "-DLLAMA_BUILD_UI=OFF",
        "-DLLAMA_USE_PREBUILT_UI=OFF",  # it would download the web UI
        "-DBUILD_SHARED_LIBS=OFF",
    ]
    started = time.monotonic()
    _log(f"building llama-server {version} (Release, portable) in {work}")
    subprocess.run(["cmake", "-S", str(src), "-B", str(work), *flags], check=True,
                   stdout=subprocess.DEVNULL)  # fmt: skip
    jobs = jobs or os.cpu_count() or 2
    subprocess.run(
        ["cmake", "--build", str(work), "--target", "llama-server", "-j", str(jobs)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    built = next(work.rglob("bin/llama-server"))
    binary.parent.mkdir(parents=True, exist_ok=True)
    tmp = binary.with_suffix(".tmp")
    shutil.copy2(built, tmp)
    tmp.replace(binary)  # the cache holds a binary only once it is whole
    _log(f"built in {time.monotonic() - started:.0f} s: {binary}")
    return binary


@dataclass(frozen=True, slots=True)
class ModelSize:
    """The random model's shape (llama architecture)."""

    embd: int = 1024
    layers: int = 12
    ff: int = 2304
    heads: int = 16
    ctx: int = 4096
    seed: int = 0

    def tag(self) -> str:
        return hashlib.sha1(repr(self).encode()).hexdigest()[:10]


def _byte_tokens() -> list[str]:
    """GPT-2's byte-to-unicode table: every byte as a printable character (byte-level BPE)."""
    keep = [*range(33, 127), *range(161, 173), *range(174, 256)]
    chars = keep[:]
    n = 0
    for b in range(256):
        if b not in keep:
            keep.append(b)
            chars.append(256 + n)
            n += 1
    table = dict(zip(keep, chars, strict=True))
    return [chr(table[b]) for b in range(256)]


def make_model(size: ModelSize | None = None, version: str = VERSION) -> Path:
    """A seeded random-weight llama GGUF (idempotent: the same size gives the same file)."""
    size = size or ModelSize()
    path = cache_dir(version) / "models" / f"{MODEL_NAME}-{size.tag()}.gguf"
    if path.exists():
        return path
    sys.path.insert(0, str(_source(version) / "gguf-py"))
    import gguf  # the vendored gguf-py, matching the engine's version
    import numpy as np

    rng = np.random.default_rng(size.seed)
    tokens = [*_byte_tokens(), "ab", "<s>", "</s>"]  # llama.cpp wants at least one merge
    bos, eos = 257, 258
    vocab, d = len(tokens), size.embd
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    w = gguf.GGUFWriter(str(tmp), "llama")
    w.add_context_length(size.ctx)
    w.add_embedding_length(d)
    w.add_block_count(size.layers)
    w.add_feed_forward_length(size.ff)
    w.add_head_count(size.heads)
    w.add_head_count_kv(size.heads)
    w.add_rope_dimension_count(d // size.heads)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    w.add_vocab_size(vocab)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_types([gguf.TokenType.NORMAL] * 257 + [gguf.TokenType.CONTROL] * 2)
    w.add_token_merges(["a b"])
    w.add_bos_token_id(bos)
    w.add_eos_token_id(eos)
    w.add_add_bos_token(False)
    w.add_chat_template(
        "{% for m in messages %}{{ m['content'] }}\n{% endfor %}"
        "{% if add_generation_prompt %}>{% endif %}"
    )

    def rand(*shape: int, scale: float = 0.02) -> np.ndarray:
        return (rng.standard_normal(shape, dtype=np.float32) * scale).astype(np.float16)

    # A shared direction c in every embedding dominates the residual stream (the layers add
    # little); printable tokens' output rows point along c, EOS's and BOS's against it, and
    # unprintable bytes' are zero: sampling picks among printable bytes, never EOS.
    c = rng.standard_normal(d).astype(np.float32)
    c /= np.linalg.norm(c)
    emb = (rng.standard_normal((vocab, d)).astype(np.float32) * 0.05 + 2.0 * c).astype(np.float16)
    out = rng.standard_normal((vocab, d)).astype(np.float32) * 0.02
    printable = [i for i in range(256) if 32 <= i < 127] + [256]
    out[printable] += 4.0 * c
    out[[bos, eos]] = -8.0 * c
    out[[i for i in range(256) if i not in printable]] = 0.0
    w.add_tensor("token_embd.weight", emb)
    w.add_tensor("output_norm.weight", np.ones(d, dtype=np.float32))
    w.add_tensor("output.weight", out.astype(np.float16))
    for i in range(size.layers):
        p = f"blk.{i}."
        w.add_tensor(p + "attn_norm.weight", np.ones(d, dtype=np.float32))
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            w.add_tensor(p + name + ".weight", rand(d, d))
        w.add_tensor(p + "ffn_norm.weight", np.ones(d, dtype=np.float32))
        w.add_tensor(p + "ffn_gate.weight", rand(size.ff, d))
        w.add_tensor(p + "ffn_up.weight", rand(size.ff, d))
        w.add_tensor(p + "ffn_down.weight", rand(d, size.ff))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    tmp.replace(path)
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LlamaServer:
    """``llama-server`` on a free loopback port with ``slots`` parallel sequences.

    ``with LlamaServer(slots=4) as server: server.base_url`` (``http://127.0.0.1:P/v1``).
    Each slot gets ``ctx_per_slot`` tokens of context; ``max_tokens`` caps a generation
    (``-n``) so none runs into the end of its slot's context.
    """

    def __init__(
        self,
        slots: int = 4,
        *,
        threads: int = 2,
        ctx_per_slot: int = 1024,
        max_tokens: int = 512,
        size: ModelSize | None = None,
        version: str = VERSION,
    ) -> None:
        self.slots, self.threads = slots, threads
        self.ctx_per_slot, self.max_tokens = ctx_per_slot, max_tokens
        self.size, self.version = size or ModelSize(), version
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.log = b""

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return self.root_url + "/v1"

    def start(self, timeout: float = 120.0) -> None:
        binary, model = build(self.version), make_model(self.size, self.version)
        self.port = _free_port()
        argv = [
            str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", str(self.port),
            "-np", str(self.slots), "-c", str(self.ctx_per_slot * self.slots),
            "-t", str(self.threads), "-tb", str(self.threads),
            "--threads-http", str(self.slots + 4),  # its default (slots + 2) is tight
            "-n", str(self.max_tokens), "--alias", MODEL_NAME, "--metrics", "--no-webui",
        ]  # fmt: skip
        self._logfile = tempfile.TemporaryFile()  # noqa: SIM115 (lives as long as the server)
        self.proc = subprocess.Popen(
            argv, stdout=self._logfile, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama-server exited ({self.proc.returncode}):\n{self._tail()}")
            with (
                contextlib.suppress(OSError),
                urllib.request.urlopen(self.root_url + "/health", timeout=2) as r,
            ):
                if r.status == 200 and json.loads(r.read()).get("status") == "ok":
                    return
            time.sleep(0.2)
        raise RuntimeError(f"llama-server did not become healthy:\n{self._tail()}")

    def _tail(self) -> str:
        self._logfile.seek(0)
        return self._logfile.read().decode("utf-8", "replace")[-3000:]

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc is not None:
            self._logfile.close()
        self.proc = None

    def __enter__(self) -> LlamaServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextlib.contextmanager
def serving(slots: int) -> Iterator[LlamaServer]:
    with LlamaServer(slots=slots) as server:
        yield server


def _die_with_parent() -> None:
    """In the child, before exec: on Linux, be sent SIGTERM when the parent dies.

    Without it a killed benchmark or test run leaves llama-server running (and its 2 threads
    busy), which skews every later timing on this machine.
    """
    if sys.platform == "linux":
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _size_fields() -> list[tuple[str, int]]:
    """(flag, default) for each of the model's shape fields (``--embd 1024`` ...)."""
    import dataclasses

    return [(f.name, f.default) for f in dataclasses.fields(ModelSize)]  # type: ignore[misc]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("build", help="download and build llama-server (cached)")
    model = sub.add_parser("model", help="write the random-weight model (cached)")
    serve = sub.add_parser("serve", help="serve on a free port until interrupted")
    serve.add_argument("--slots", type=int, default=4)
    serve.add_argument("--threads", type=int, default=2)
    for p in (model, serve):  # the model's shape
        for name, value in _size_fields():
            p.add_argument(f"--{name}", type=int, default=value)
    args = ap.parse_args(argv)
    if args.cmd == "build":
        print(build())
        return 0
    size = ModelSize(**{name: getattr(args, name) for name, _ in _size_fields()})
    if args.cmd == "model":
        print(make_model(size))
    else:
        signal.signal(signal.SIGTERM, _raise_interrupt)  # `kill` stops the server too
        with LlamaServer(slots=args.slots, threads=args.threads, size=size) as server:
            print(f"listening on {server.base_url}", flush=True)
            with contextlib.suppress(KeyboardInterrupt):
                assert server.proc is not None
                server.proc.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
