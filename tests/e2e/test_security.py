"""The confinement cases of the adversarial probe, re-run through the real MCP client over stdio
and streamable HTTP: command execution is opt-in (and needs a token over HTTP), nothing is read,
written or run through a link planted in the workspace, tokens that are empty or missing stop the
server at start-up with a clear message. Nothing outside the workspace is touched, and no message
says where a link points."""

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from conftest import FIXTURES, free_port, server_env
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

TOKEN = "kprof-test-token-" + "z" * 24


@pytest.fixture
def outside(tmp_path):
    d = tmp_path / "outside"
    d.mkdir()
    (d / "secret.txt").write_text("do not touch\n")
    (d / "evil.py").write_text("open(__file__ + '.ran', 'w').write('ran')\n")
    (d / "__init__.py").write_text(
        (FIXTURES / "user_kernels" / "scale.py").read_text() + "\nopen(__file__ + '.ran', 'w').write('ran')\n"
    )
    return d


def _plant(ws: Path, outside: Path) -> Path:
    """A cloned repository with links in it: a finished-looking profile whose params.json links
    outside, a `docs` link, a package whose __init__.py links outside, a linked script."""
    prof = ws / "prof"
    prof.mkdir()
    (outside / "params.json").write_text('{"stolen": true}')
    os.symlink(outside / "params.json", prof / "params.json")
    os.symlink(outside / "params.json", prof / "result.json")
    os.symlink(outside, ws / "docs")
    (ws / "pkg").mkdir()
    os.symlink(outside / "__init__.py", ws / "pkg" / "__init__.py")
    os.symlink(outside / "evil.py", ws / "linked.py")
    return prof


def _untouched(outside: Path) -> None:
    assert sorted(p.name for p in outside.iterdir()) == [
        "__init__.py",
        "evil.py",
        "params.json",
        "secret.txt",
    ]
    assert (outside / "secret.txt").read_text() == "do not touch\n"


def _text(r) -> str:
    return r.content[0].text if r.content else ""


async def _probe(c: Client, ws: Path, outside: Path, commands: bool) -> None:
    """Every confinement case against one connected client."""
    names = {t.name for t in (await c.list_tools()).tools}
    assert ("profile_command" in names) is commands
    cases = [
        ("read_params", {"profile_dir": "prof"}, "params.json' is a symbolic link"),
        ("read_params", {"profile_dir": "x" * 300}, "longer than the file system allows"),
        ("update_devlog", {"kernel": "vector_add", "profile_dir": "prof"}, "result.json' is a symbolic link"),
        (
            "profile_kernel",
            {"kernel": "./pkg", "mode": "event", "wait_s": 0},
            "__init__.py' is a symbolic link",
        ),
    ]
    if commands:
        cases += [
            (
                "profile_command",
                {
                    "command": [
                        "python",
                        "-m",
                        "timeit",
                        "-n",
                        "1",
                        "-s",
                        "import os; os.system('id > x.txt')",
                        "pass",
                    ],
                    "wait_s": 0,
                },
                "runs only a module under the working directory",
            ),
            (
                "profile_command",
                {"command": ["python", "-m", "cProfile", str(outside / "evil.py")], "wait_s": 0},
                "runs only a module under the working directory",
            ),
            (
                "profile_command",
                {"command": ["python", "-m", "pytest", str(outside / "evil.py")], "wait_s": 0},
                "outside the workspace",
            ),
            (
                "profile_command",
                {"command": ["python", "linked.py"], "wait_s": 0},
                "'linked.py' is a symbolic link",
            ),
        ]
    for tool, args, needle in cases:
        r = await c.call_tool(tool, args)
        assert r.is_error and needle in _text(r), (tool, args, _text(r))
        assert str(outside) not in _text(r) or str(outside) in repr(args), _text(r)  # no link target revealed
    # the devlog's own directory a link: refused (a real profile to log this time)
    ok = await c.call_tool(
        "profile_kernel",
        {"kernel": "vector_add", "version": "v0", "params": {"n": 1024}, "mode": "event", "wait_s": 50},
    )
    assert not ok.is_error, _text(ok)
    r = await c.call_tool(
        "update_devlog", {"kernel": "vector_add", "profile_dir": ok.structured_content["profile_dir"]}
    )
    assert r.is_error and "'docs' is a symbolic link" in _text(r), _text(r)
    _untouched(outside)
    assert not (ws / "x.txt").exists()


def test_stdio_without_and_with_allow_commands(workspace, outside):
    _plant(workspace, outside)

    async def main():
        for flags, commands in (([], False), (["--allow-commands"], True)):
            server = StdioServerParameters(
                command=sys.executable,
                args=["-m", "kprof_mcp.server", "--workspace", str(workspace), *flags],
                env={**server_env(), "KPROF_FORCE_CPU": "1"},
            )
            async with Client(server) as c:
                await _probe(c, workspace, outside, commands)
                if not commands:
                    r = await c.call_tool("profile_command", {"command": ["python", "linked.py"]})
                    assert r.is_error and "profile_command" in _text(r)

    anyio.run(main)


def _serve(ws: Path, args: list[str], env_extra: dict[str, str]) -> tuple[subprocess.Popen, int]:
    port = free_port()
    env = {**server_env(), "PATH": "/usr/bin:/bin", "KPROF_FORCE_CPU": "1", **env_extra}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kprof_mcp.server",
            "--transport",
            "streamable-http",
            "--port",
            str(port),
            "--workspace",
            str(ws),
            *args,
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.time() + 30
    while time.time() < deadline and proc.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.2)
    return proc, port


@pytest.mark.parametrize(
    "args, env, needle",
    [
        (["--allow-commands"], {}, "--allow-commands over streamable-http needs a bearer token"),
        ([], {"KPROF_MCP_TOKEN": ""}, "KPROF_MCP_TOKEN is empty"),
        ([], {"KPROF_MCP_TOKEN": "   "}, "KPROF_MCP_TOKEN is empty"),
        (["--token-file", "/nonexistent/token"], {}, "no such file"),
        (["--token-file", "EMPTY"], {}, "is empty"),
    ],
)
def test_http_start_up_refuses_unusable_tokens(workspace, tmp_path, args, env, needle):
    (tmp_path / "empty").write_text("\n")
    args = [str(tmp_path / "empty") if a == "EMPTY" else a for a in args]
    proc, _ = _serve(workspace, args, env)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode != 0 and needle in err, err
    assert "Traceback" not in err


def test_http_with_token_and_commands(workspace, outside):
    _plant(workspace, outside)
    proc, port = _serve(workspace, ["--allow-commands"], {"KPROF_MCP_TOKEN": TOKEN})
    try:

        async def main():
            http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
            async with (
                http,
                Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as c,
            ):
                await _probe(c, workspace, outside, commands=True)

        anyio.run(main)
    finally:
        proc.terminate()
        proc.wait(15)
