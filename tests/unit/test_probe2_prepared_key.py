"""Issue 38, the independent probe (rows 3b and 4): a confined command leaves a FIFO or a link to
/dev/zero among the *.py files of its working directory; the server then hashes that tree
(store.prepared_key, device lock held) for every later profile_command with that cwd. Before the
fix it blocked for good on the FIFO and read /dev/zero until it was OOM-killed. And a package with
a FIFO inside is refused by the package check (safefs.check_tree) like one with a link."""

from __future__ import annotations

import os
import resource
import threading

import pytest

from kprof_mcp import packages, safefs, store


def _in_time(fn, seconds: float = 20.0):
    box: dict = {}

    def go() -> None:
        try:
            box["value"] = fn()
        except BaseException as e:  # noqa: BLE001
            box["error"] = e

    t = threading.Thread(target=go, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), "prepared_key blocked on a file a command planted"
    assert "error" not in box, box.get("error")
    return box["value"]


def _tree(tmp_path):
    d = tmp_path / "sub"
    (d / "pp").mkdir(parents=True)
    (d / "main.py").write_text("print('hi')\n")
    return d


def test_a_fifo_among_the_sources_does_not_block(tmp_path):
    d = _tree(tmp_path)
    before = store.prepared_key(d, "v0", {}, "cpu")
    os.mkfifo(d / "pp" / "f.py")
    key = _in_time(lambda: store.prepared_key(d, "v0", {}, "cpu"))
    assert key == before  # a FIFO is no source: skipped


def test_a_link_to_dev_zero_is_not_read(tmp_path):
    d = _tree(tmp_path)
    before = store.prepared_key(d, "v0", {}, "cpu")
    os.symlink("/dev/zero", d / "pp" / "z.py")
    os.symlink("/etc/hostname", d / "pp" / "h.py")
    # Without the fix this reads /dev/zero whole: bound the address space so the test fails fast
    # (MemoryError) instead of taking the machine's memory.
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = 8 << 30
    if soft == resource.RLIM_INFINITY or soft > cap:
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        key = _in_time(lambda: store.prepared_key(d, "v0", {}, "cpu"))
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    assert key == before  # links are skipped, not followed


def test_sources_still_decide_the_key(tmp_path):
    d = _tree(tmp_path)
    a = store.prepared_key(d, "v0", {}, "cpu")
    (d / "pp" / "k.py").write_text("x = 1\n")
    b = store.prepared_key(d, "v0", {}, "cpu")
    (d / "pp" / "k.py").write_text("x = 2\n")
    c = store.prepared_key(d, "v0", {}, "cpu")
    (d / "notes.txt").write_text("not a source")
    assert len({a, b, c}) == 3 and store.prepared_key(d, "v0", {}, "cpu") == c
    assert store.prepared_key(d, "v1", {}, "cpu") != c
    assert store.prepared_key(d / "main.py", "v0", {}, "cpu") != c


def test_a_large_source_is_keyed_without_being_read_whole(tmp_path, monkeypatch):
    d = _tree(tmp_path)
    monkeypatch.setattr(store, "_KEY_FILE_BYTES", 1000)
    big = d / "big.py"
    big.write_bytes(b"#" * 5000)
    reads: list[int] = []
    real_read = os.read
    monkeypatch.setattr(os, "read", lambda fd, n: reads.append(n) or real_read(fd, n))
    a = store.prepared_key(d, "v0", {}, "cpu")
    assert reads and max(reads) <= 1001
    big.write_bytes(b"#" * 6000)
    assert store.prepared_key(d, "v0", {}, "cpu") != a


@pytest.mark.parametrize("plant", ["fifo", "link"])
def test_the_package_check_refuses_fifos_and_links(tmp_path, plant):
    ws = tmp_path / "ws"
    pkg = ws / "kern"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    assert packages.check_package(pkg, [ws]) == pkg
    if plant == "fifo":
        os.mkfifo(pkg / "sub" / "f.py")
    else:
        os.symlink("/etc/hostname", pkg / "sub" / "h.py")
    with pytest.raises(packages.KernelNotFound) as e:
        packages.check_package(pkg, [ws])
    want = (
        "'kern/sub/f.py' is not a regular file" if plant == "fifo" else "'kern/sub/h.py' is a symbolic link"
    )
    assert want in str(e.value)
    with pytest.raises(safefs.UnsafePath):
        safefs.check_tree(ws, pkg)
