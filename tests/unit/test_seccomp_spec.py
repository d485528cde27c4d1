"""The seccomp filter is installed with SECCOMP_FILTER_FLAG_SPEC_ALLOW: without it a kernel whose
speculative-store-bypass (or spectre_v2_user) mitigation is "seccomp" forces SSBD on the confined command,
which slows a host-bound Python loop (the plain pass of host-bound commands on the H200, docs/modes.md).
The flag leaves the process's speculation state as the kernel's default set it; the file-system rules
are the same filter."""

import ctypes
import errno
import subprocess
import sys
import textwrap

import pytest

from kprof_mcp.sandbox import seccomp

SYS = seccomp._SYS_SECCOMP.get(__import__("platform").machine())
needs_linux_arch = pytest.mark.skipif(SYS is None, reason="no seccomp filter for this architecture")


class _Fn:
    """A stand-in for a ctypes function: callable, and argtypes/restype can be set on it."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, *args):
        return self.fn(*args)


class _FakeLibc:
    """Records the calls install() makes; the seccomp(2) call answers ``seccomp_errno`` (0: success)."""

    def __init__(self, seccomp_errno: int = 0):
        self.calls: list[tuple] = []
        self.err = seccomp_errno
        self.errno = 0
        self.prctl = _Fn(self._prctl)
        self.syscall = _Fn(self._syscall)

    def _prctl(self, *args):
        self.calls.append(("prctl", args[0], args[1]))
        return 0

    def _syscall(self, nr, op, flags, prog):
        self.calls.append(("syscall", nr.value, op.value, flags.value))
        self.errno = self.err
        return -1 if self.err else 0


@needs_linux_arch
@pytest.mark.parametrize("err", [0, errno.EINVAL, errno.ENOSYS])
def test_install_passes_spec_allow_and_falls_back_on_old_kernels(monkeypatch, err):
    fake = _FakeLibc(err)
    monkeypatch.setattr(seccomp.ctypes, "CDLL", lambda *a, **k: fake)
    monkeypatch.setattr(seccomp.ctypes, "get_errno", lambda: fake.errno)
    seccomp.install()
    assert fake.calls[0] == ("prctl", 38, 1)  # no_new_privs first
    assert fake.calls[1] == ("syscall", SYS, 1, 4)  # SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_SPEC_ALLOW
    if err:  # a kernel without seccomp(2) or the flag: the filter by prctl, as before
        assert fake.calls[2:] == [("prctl", 22, 2)]
    else:
        assert len(fake.calls) == 2


@needs_linux_arch
def test_install_reports_other_refusals(monkeypatch):
    fake = _FakeLibc(errno.EFAULT)
    monkeypatch.setattr(seccomp.ctypes, "CDLL", lambda *a, **k: fake)
    monkeypatch.setattr(seccomp.ctypes, "get_errno", lambda: fake.errno)
    with pytest.raises(OSError, match="seccomp filter"):
        seccomp.install()
    assert [c[0] for c in fake.calls] == ["prctl", "syscall"]  # no silent fall-back past a real refusal


@needs_linux_arch
def test_filtered_process_keeps_its_speculation_state():
    """In a real process: the filter is on (Seccomp 2, chmod refused) and the speculation lines of
    /proc/self/status are what they were before it (a "seccomp" mitigation would force-disable them)."""
    code = textwrap.dedent(
        """
        import json, os, tempfile
        from kprof_mcp.sandbox import seccomp
        def status():
            return {k: v.strip() for k, v in (l.split(":", 1) for l in open("/proc/self/status"))
                    if k.startswith(("Seccomp", "Speculation"))}
        before = status()
        f = tempfile.NamedTemporaryFile(delete=False)
        seccomp.install()
        try:
            os.chmod(f.name, 0o600)
            chmod = "allowed"
        except PermissionError:
            chmod = "refused"
        print(json.dumps({"before": before, "after": status(), "chmod": chmod}))
        """
    )
    cp = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert cp.returncode == 0, cp.stderr
    out = __import__("json").loads(cp.stdout)
    assert out["after"]["Seccomp"] == "2" and out["chmod"] == "refused"
    spec = [k for k in out["before"] if k.startswith("Speculation")]
    if not spec:
        pytest.skip("this kernel shows no speculation state in /proc/self/status")
    assert {k: out["after"][k] for k in spec} == {k: out["before"][k] for k in spec}


def test_ctypes_flag_values_match_the_kernel_headers():
    # linux/seccomp.h: SECCOMP_SET_MODE_FILTER 1, SECCOMP_FILTER_FLAG_SPEC_ALLOW (1UL << 2)
    assert (seccomp._SECCOMP_SET_MODE_FILTER, seccomp._SECCOMP_FILTER_FLAG_SPEC_ALLOW) == (1, 1 << 2)
    assert ctypes.sizeof(ctypes.c_uint) == 4
