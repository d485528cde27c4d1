"""The kernel's boundary around a user's command (``profile_command``): Landlock and a subreaper.

``python -m kprof_mcp.sandbox POLICY.json -- ARGV...`` is the process that supervises one command
(the runner puts it in front of ``python -m kprof_mcp.child command``, behind a profiler's prefix
when there is one: the profiler, NVIDIA's binary with kprof's own arguments, stays outside). It

1. takes the lifeline (:mod:`kprof_mcp.lifeline`) and becomes a *child subreaper*
   (``PR_SET_CHILD_SUBREAPER``): every process the command starts stays its descendant, a
   grandchild that left the session (``setsid``) and whose parent died included;
2. forks the command, which restricts itself with Landlock (:func:`restrict`) before ``exec``:
   it may write only under the policy's ``write`` directories (the command's working directory,
   its runs' directory under ``out/``, a private temporary directory) and the GPU's device nodes,
   and read only under its ``read`` directories (the workspace, the interpreter's prefixes and site
   directories, the system's libraries, ``/proc``, ``/sys``, ``/dev``); it may not signal or trace
   a process outside its domain (the supervisor, the server: Landlock's signal scope, ABI 6);
3. when the command ends, is cancelled (``SIGTERM``) or the server is gone (the lifeline), kills the
   whole subtree (:func:`kill_tree`) and exits as the command did.

The supervisor itself is not confined (it only waits, walks ``/proc`` and kills). Landlock below ABI
:data:`MIN_ABI` (no ``truncate`` control) counts as missing: the server then refuses
``--allow-commands`` unless the operator also passed ``--unconfined-commands``.
"""

from __future__ import annotations

import ctypes
import glob
import json
import os
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path

from . import lifeline

# Syscall numbers (the same on x86-64 and arm64) and constants from <linux/landlock.h>.
_SYS_CREATE, _SYS_ADD_RULE, _SYS_RESTRICT = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_CHILD_SUBREAPER = 36
MIN_ABI = 3  # truncate(2) is handled from ABI 3 (Linux 6.2); below it a file outside could be emptied

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE = 1 << 13, 1 << 14  # ABI 2, ABI 3
SCOPE_ABSTRACT_UNIX = 1 << 0  # ABI 6: no connection to an abstract unix socket outside the domain
SCOPE_SIGNAL = 1 << 1  # ABI 6: no signal to a process outside the domain

READ = EXECUTE | READ_FILE | READ_DIR
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE  # the only rights a rule on a file may hold

# Read-only system paths every Python/CUDA program needs (those that exist are allowed).
SYSTEM_READ = (
    "/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc", "/opt",
    "/proc", "/sys", "/dev", "/run", "/var/lib/nvidia", "/nix", "/snap",
)  # fmt: skip
# Device nodes a program opens for writing: the usual character devices and the GPU's.
DEVICE_FILES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty")
DEVICE_GLOBS = ("/dev/nvidia*", "/dev/nvidia-caps/*", "/dev/dri/*")
# cuInit() names its threads in /proc/<pid>/task/<tid>/comm and fails with error 304 without it. Landlock
# rules bind to inodes (/proc/self would be the supervisor's), so the command's own /proc/<pid> is added
# in the forked child, before it confines itself: its files (its threads' names, its own settings) are
# writable, nothing else of /proc (not /proc/sys, not other processes'). A process the command starts
# has another pid: it cannot name its threads, so CUDA does not initialise in the command's subprocesses.
PROC_WRITE: tuple[str, ...] = ()
DEVICE_DIRS = ("/dev/shm",)
# Caches a program writes under the home directory otherwise, pointed inside the private tmp.
CACHE_VARS = {
    "TRITON_CACHE_DIR": "triton",
    "TRITON_HOME": "triton-home",
    "TORCHINDUCTOR_CACHE_DIR": "inductor",
    "TORCH_EXTENSIONS_DIR": "torch_extensions",
    "CUDA_CACHE_PATH": "nv-compute-cache",
    "XDG_CACHE_HOME": "xdg-cache",
    "MPLCONFIGDIR": "matplotlib",
}


@dataclass
class Policy:
    """What the confined command may read (and execute) and write: directories, each with
    everything beneath it; ``devices``: device files opened for writing (and, added by the supervisor
    after its fork, the command's own ``/proc/<pid>``)."""

    read: list[str] = field(default_factory=list)
    write: list[str] = field(default_factory=list)
    devices: list[str] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps({"read": self.read, "write": self.write, "devices": self.devices})

    @classmethod
    def from_json(cls, text: str) -> Policy:
        d = json.loads(text)
        return cls(read=list(d["read"]), write=list(d["write"]), devices=list(d.get("devices", [])))


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _syscall(nr: int, *args) -> int:
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    rc = libc.syscall(ctypes.c_long(nr), *args)
    if rc < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return rc


_abi: int | None = None


def abi() -> int:
    """The kernel's Landlock ABI version; 0 when Landlock is missing, disabled or filtered out."""
    global _abi
    if _abi is None:
        try:
            _abi = _syscall(_SYS_CREATE, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
        except (OSError, AttributeError):
            _abi = 0
    return _abi


def available() -> bool:
    """Whether commands can be confined here (Landlock of ABI :data:`MIN_ABI` or later)."""
    return abi() >= MIN_ABI


def _handled(version: int) -> int:
    rights = READ | WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_CHAR | MAKE_DIR | MAKE_REG
    rights |= MAKE_SOCK | MAKE_FIFO | MAKE_BLOCK | MAKE_SYM
    if version >= 2:
        rights |= REFER
    if version >= 3:
        rights |= TRUNCATE
    return rights


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def build_ruleset(policy: Policy) -> int:
    """A Landlock ruleset's descriptor for ``policy`` (paths that do not exist are left out).
    Raises OSError when Landlock is unusable."""
    version = abi()
    if version < 1:
        raise OSError(95, "Landlock is not available on this kernel")
    handled = _handled(version)
    scoped = SCOPE_SIGNAL | SCOPE_ABSTRACT_UNIX if version >= 6 else 0
    attr = (ctypes.c_uint64 * 3)(handled, 0, scoped)
    size = 24 if version >= 6 else 8
    fd = _syscall(_SYS_CREATE, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    try:
        for paths, rights in ((policy.read, READ), (policy.write, handled), (policy.devices, FILE_RIGHTS)):
            for p in paths:
                _add_rule(fd, p, rights, handled)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _add_rule(ruleset: int, path: str, rights: int, handled: int) -> None:
    try:
        pfd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # not there (or not reachable): nothing to allow
    try:
        if not os.path.isdir(f"/proc/self/fd/{pfd}"):
            rights &= FILE_RIGHTS
        rule = _PathBeneath(rights & handled, pfd)
        _syscall(
            _SYS_ADD_RULE,
            ctypes.c_int(ruleset),
            ctypes.c_int(_RULE_PATH_BENEATH),
            ctypes.byref(rule),
            ctypes.c_uint32(0),
        )
    finally:
        os.close(pfd)


def restrict(ruleset: int) -> None:
    """Confine this thread (and everything it will start) by ``ruleset``; no way back."""
    _libc().prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    _syscall(_SYS_RESTRICT, ctypes.c_int(ruleset), ctypes.c_uint32(0))


# ------------------------------------------------------------------ a command's policy
def _python_dirs() -> list[str]:
    """The interpreter's prefixes and site directories (the server's interpreter runs the child)."""
    import site
    import sysconfig

    dirs = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    dirs.add(str(Path(sys.executable).resolve().parent.parent))
    for getter in (site.getsitepackages, lambda: [site.getusersitepackages()]):
        try:
            dirs.update(getter())
        except Exception:  # noqa: BLE001 — a site module without them (some virtualenvs)
            pass
    dirs.update(
        v for k, v in sysconfig.get_paths().items() if k in ("stdlib", "platstdlib", "purelib", "platlib")
    )
    # import-path entries of installed packages (.pth files, editable installs' site dirs); never
    # the server's working directory ('' or cwd), which may be the home directory
    cwd = os.getcwd()
    for p in sys.path:
        if p and p != cwd and ("site-packages" in p or "dist-packages" in p or p.endswith(".zip")):
            dirs.add(p)
    # the operator's own search paths for the server (a wheel directory, profiler libraries), never
    # the home directory or / as a whole
    never = {"/", str(Path.home()), cwd}
    for var in ("PYTHONPATH", "LD_LIBRARY_PATH"):
        dirs.update(
            p for p in os.environ.get(var, "").split(os.pathsep) if p and os.path.isabs(p) and p not in never
        )
    return sorted(dirs)


def _tool_root(exe: str) -> str | None:
    """The install directory of a profiler binary (``.../bin/nsys`` → ``...``)."""
    try:
        real = Path(exe).resolve()
    except OSError:
        return None
    return (
        str(real.parent.parent)
        if real.parent.name.startswith("bin") or real.parent.name.startswith("host")
        else str(real.parent)
    )


def command_policy(
    workspace: Path, cwd: Path, runs_dir: Path, private_tmp: Path, prefix: list[str] | None = None
) -> Policy:
    """The policy of one command: it writes in its working directory, its runs' directory under
    ``out/`` and its private tmp, and reads the workspace, Python and the system (and the install
    directory of a profiler that wraps it: its injection libraries are loaded into the command)."""
    kprof_root = str(Path(__file__).resolve().parent.parent)
    read = [str(workspace), kprof_root, *_python_dirs(), *(p for p in SYSTEM_READ if os.path.exists(p))]
    if prefix:
        root = _tool_root(prefix[0])
        if root and root != "/":
            read.append(root)
    devices = [p for p in (*DEVICE_FILES, *PROC_WRITE) if os.path.exists(p)]
    for pattern in DEVICE_GLOBS:
        devices.extend(sorted(glob.glob(pattern)))
    write = [str(cwd), str(runs_dir), str(private_tmp), *(d for d in DEVICE_DIRS if os.path.isdir(d))]
    return Policy(read=sorted(set(read)), write=write, devices=devices)


# Environment variables a command does not get: the server's bearer token and whatever names a secret
# (a cloud key, a password) — the command could otherwise call the server's own tools or leave with them.
SECRET_WORDS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "API_KEY", "ACCESS_KEY", "PRIVATE_KEY")


def command_env(env: dict[str, str], private_tmp: Path) -> dict[str, str]:
    """The command's environment, without the server's secrets (:data:`SECRET_WORDS` in a name), with its
    temporary directory and compiler caches inside ``private_tmp``."""
    out = {k: v for k, v in env.items() if not any(w in k.upper() for w in SECRET_WORDS)}
    tmp = private_tmp / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    for var in ("TMPDIR", "TEMP", "TMP"):
        out[var] = str(tmp)
    for var, name in CACHE_VARS.items():
        out[var] = str(private_tmp / "cache" / name)
    return out


def wrap(policy_file: Path | None, argv: list[str]) -> list[str]:
    """The argument vector that runs ``argv`` under this module's supervisor (confined by the
    policy in ``policy_file``; None: supervised only, where Landlock is missing)."""
    return [sys.executable, "-m", "kprof_mcp.sandbox", str(policy_file or "-"), "--", *argv]


# ------------------------------------------------------------------ the supervisor
def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: python -m kprof_mcp.sandbox POLICY.json|- -- ARGV...", file=sys.stderr)
        return 2
    policy_file, command = argv[0], argv[2:]
    ruleset = -1
    if policy_file != "-":
        try:
            ruleset = build_ruleset(Policy.from_json(Path(policy_file).read_text()))
        except OSError as e:
            print(f"kprof sandbox: cannot confine the command: {e}", file=sys.stderr)
            return 126
    try:
        _libc().prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    pid = os.fork()
    if pid == 0:  # the command: confined, then exec'd
        try:
            if ruleset >= 0:
                _add_rule(ruleset, f"/proc/{os.getpid()}", FILE_RIGHTS, _handled(abi()))
                restrict(ruleset)
                os.close(ruleset)
            os.execvp(command[0], command)
        except BaseException as e:  # noqa: BLE001
            try:
                os.write(2, f"kprof sandbox: cannot start {command[0]}: {e}\n".encode())
            finally:
                os._exit(127)
    if ruleset >= 0:
        os.close(ruleset)
    return _supervise(pid)


def _supervise(pid: int) -> int:
    """Wait for the command (reaping every orphan handed to this subreaper meanwhile); when it has
    ended, or on SIGTERM/SIGINT, kill what is left of the subtree; exit as the command did."""

    def stop(signum, frame):
        lifeline.kill_tree(os.getpid())
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    lifeline.watch()  # the server gone: this subtree, then this group, killed
    status = None
    while status is None:
        try:
            got, st = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        if got == pid:
            status = st
    lifeline.kill_tree(os.getpid())
    if status is None:
        return 1
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        sys.stdout.flush()
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)  # the runner reads the command's signal as before
        return 128 + sig
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
