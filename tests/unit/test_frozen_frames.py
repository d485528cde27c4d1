"""A command's frames below kprof's frozen ones (capture.command_target.frozen_frames_known).

Under kprof the command runs below frames of frozen modules (``python -m kprof_mcp.child``, ``runpy``) that
``python script.py`` does not have. For a frame whose file is no file, ``inspect.getmodule`` scans every loaded
module again at every call, so a caller lookup by ``inspect.stack()`` (the thirty-second held-back set's tracing
helper) cost 6.8 ms a call in kprof's child against 0.3 ms alone on this CPU machine (0.42 ms after the fix, the
depth of kprof's own frames the rest). Checked here by counting the scans, not by timing."""

import inspect
import runpy
import subprocess
import sys
import textwrap
from pathlib import Path

from kprof_mcp.capture.command_target import frozen_frames_known


def _runpy_frame(tmp_path: Path):
    """A frame of runpy's own (``<frozen runpy>``): the caller of a script run by run_path."""
    script = tmp_path / "grab.py"
    script.write_text("import sys\nframe = sys._getframe(1)\n")
    return runpy.run_path(str(script))["frame"]


def test_a_frozen_frame_s_module_is_found_without_a_scan(tmp_path, monkeypatch):
    frame = _runpy_frame(tmp_path)
    assert frame.f_code.co_filename == "<frozen runpy>"
    monkeypatch.setattr(inspect, "modulesbyfile", dict(inspect.modulesbyfile))
    inspect.modulesbyfile.pop("<frozen runpy>", None)
    scans = []
    real = sys.modules.copy

    class Counting(dict):
        def copy(self):
            scans.append(1)
            return real()

    monkeypatch.setattr(sys, "modules", Counting(sys.modules))
    inspect.getframeinfo(frame)
    before = len(scans)
    assert before >= 1  # unknown: getmodule scanned the loaded modules
    frozen_frames_known()
    assert inspect.modulesbyfile["<frozen runpy>"] == "runpy"
    info = inspect.getframeinfo(frame)
    assert len(scans) == before  # known: no scan
    assert info.filename == "<frozen runpy>" and info.code_context is None  # what inspect says is unchanged


def test_a_command_run_by_kprof_finds_runpy_s_frames_known(tmp_path):
    """The command child's way of running a script (prepare's callable) makes the frozen frames known
    before the script's first line."""
    script = tmp_path / "probe.py"
    script.write_text(
        textwrap.dedent(
            """
            import inspect, json, sys
            stack = inspect.stack()
            json.dump({"known": inspect.modulesbyfile.get("<frozen runpy>"),
                       "frozen": [f.filename for f in stack if f.filename.startswith("<frozen")]},
                      open(sys.argv[1], "w"))
            """
        )
    )
    out = tmp_path / "out.json"
    code = textwrap.dedent(
        f"""
        from pathlib import Path
        from kprof_mcp.capture.command_target import prepare
        argv, first, run = prepare("path", {str(script)!r}, [{str(out)!r}], Path({str(tmp_path)!r}), None,
                                   Path({str(tmp_path)!r}))
        import sys
        sys.argv = argv
        run()
        """
    )
    cp = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert cp.returncode == 0, cp.stderr
    import json

    got = json.loads(out.read_text())
    assert got["known"] == "runpy" and "<frozen runpy>" in got["frozen"]


def test_the_runner_s_own_main_frames_are_known_once_the_command_replaces_main(tmp_path):
    """The child runs as ``python -m kprof_mcp.child``: its ``__main__``'s frames stay below the command's, and
    once runpy makes the command ``__main__`` no loaded module has their file, so ``inspect.getmodule`` scanned
    every module for each of them at every call (on this CPU, inspect.stack() at 23 frames: 610 us a call, 292 us
    with the runner's frames known, 13 us a frame as a plain script's). Every frame's file is known after one
    call: none sends a later lookup to the scan."""
    script = tmp_path / "probe.py"
    script.write_text(
        textwrap.dedent(
            """
            import inspect, json, os, sys
            def deep(n):
                return deep(n - 1) if n else inspect.stack()
            stack = deep(3)
            keys = [os.path.normcase(os.path.abspath(f.filename)) for f in stack if not f.filename.startswith("<")]
            json.dump({"unknown": [k for k in keys if k not in inspect.modulesbyfile],
                       "files": keys}, open(sys.argv[1], "w"))
            """
        )
    )
    runner = tmp_path / "runner.py"  # stands for kprof_mcp/child/__main__.py, run as __main__
    out = tmp_path / "out.json"
    runner.write_text(
        textwrap.dedent(
            f"""
            import sys
            from pathlib import Path
            from kprof_mcp.capture.command_target import prepare

            def main():
                argv, first, run = prepare("path", {str(script)!r}, [{str(out)!r}], Path({str(tmp_path)!r}),
                                           None, Path({str(tmp_path)!r}))
                sys.argv = argv
                run()

            main()
            """
        )
    )
    cp = subprocess.run([sys.executable, str(runner)], capture_output=True, text=True, timeout=120)
    assert cp.returncode == 0, cp.stderr
    import json

    got = json.loads(out.read_text())
    assert any(f.endswith("runner.py") for f in got["files"])  # the runner's frames are below the command's
    assert got["unknown"] == []
