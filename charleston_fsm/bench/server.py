"""A ``charleston-fsm serve`` subprocess on a free port: the load generator's server (with
its memory and CPU time) and the HTTP tests' (``tests/api_helpers.Server``)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx


def cli_command() -> list[str]:
    """How to run this installation's ``charleston-fsm`` (its script, else ``python -c``)."""
    script = Path(sys.executable).parent / "charleston-fsm"
    if script.exists():
        return [str(script)]
    found = shutil.which("charleston-fsm")
    return [found] if found else [sys.executable, "-c", "from charleston_fsm.cli import app; app()"]


def exit_on_sigterm() -> None:
    """``timeout``, a CI runner or a supervisor ends a bench with SIGTERM: it then exits
    through every ``finally`` instead of at once, so the ``serve`` processes it started
    are stopped (and its scratch databases dropped), never left running behind it."""

    def end(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, end)


def free_port() -> int:
    """A loopback port no one listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServeProcess:
    """``charleston-fsm serve`` on a loopback port over ``database_url``; logs to
    ``log_path``; ready (``/readyz``) when built.

    ``workers`` is passed through as ``--workers`` when given, ``extra`` as is;
    ``log_level``: ``--log-level`` (``None``: serve's default). ``env``: the process's
    whole environment (default: this one without any ``CHARLESTON_`` variable, so only
    the options configure the server). ``port``: a chosen one (default: a free one).
    """

    def __init__(
        self,
        database_url: str,
        log_path: Path,
        workers: int | None = None,
        timeout: float = 60,
        extra: Sequence[str] = (),
        *,
        log_level: str | None = "warning",
        env: Mapping[str, str] | None = None,
        port: int | None = None,
    ) -> None:
        self.port = port or free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        args = [*cli_command(), "serve", "--host", "127.0.0.1", "--port", str(self.port)]
        args += ["--database-url", database_url]
        if log_level is not None:
            args += ["--log-level", log_level]
        if workers:
            args += ["--workers", str(workers)]
        args += extra  # more serve options (e.g. "--http h11" to compare parsers)
        if env is None:
            env = {k: v for k, v in os.environ.items() if not k.startswith("CHARLESTON_")}
        self._log = open(log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            args, stdout=self._log, stderr=subprocess.STDOUT, env=dict(env)
        )
        try:
            self._wait_ready(timeout)
        except BaseException:  # not ready, or the caller ended meanwhile (SIGTERM, ^C)
            self.stop()
            raise

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"serve exited: {self.log_path.read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.base_url}/readyz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"serve did not become ready: {self.log_path.read_text()[-2000:]}")

    def client(self, token: str | None = None, **kwargs: Any) -> httpx.Client:
        """An HTTP client of this server (with the bearer ``token``, when given)."""
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.base_url, headers=headers, timeout=30, **kwargs)

    def rss_mb(self) -> float:
        """Resident memory of the server and its worker processes, in MB."""
        return sum(_rss_kb(pid) for pid in _tree(self.proc.pid)) / 1024

    def cpu_seconds(self) -> float:
        """CPU time (user + system) the server and its workers have used so far."""
        return sum(_cpu_s(pid) for pid in _tree(self.proc.pid))

    def loop_cpu_seconds(self) -> float:
        """The same, of each process's main thread only: where uvicorn runs its event loop
        (HTTP, routing, middleware); routes that block run in worker threads."""
        return sum(_cpu_s(pid, thread=pid) for pid in _tree(self.proc.pid))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                # its worker processes too: a parent killed alone leaves them serving
                for pid in reversed(_tree(self.proc.pid)):
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
                self.proc.wait()
        self._log.close()


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants (Linux ``/proc``; just ``pid`` elsewhere)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        for task in Path(f"/proc/{current}/task").glob("*/children"):
            with contextlib.suppress(OSError):
                todo += [int(c) for c in task.read_text().split()]
    return found


def _rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _cpu_s(pid: int, thread: int | None = None) -> float:
    """CPU seconds of process ``pid`` (or of its thread ``thread``)."""
    stat = f"/proc/{pid}/stat" if thread is None else f"/proc/{pid}/task/{thread}/stat"
    try:
        fields = Path(stat).read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
