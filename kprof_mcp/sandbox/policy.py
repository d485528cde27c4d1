"""What a confined process may read and write (:mod:`kprof_mcp.sandbox`), and its environment: a user's
command (``profile_command``) and a kernel child, the warm worker or fresh process that imports workspace
kernel packages (``profile_kernel`` and the tools that load a package).

Write rules never carry ``MAKE_CHAR``/``MAKE_BLOCK`` (no device node is created anywhere) and never
follow a link. ``/proc`` and ``/dev/shm`` are granted by the supervisor in the confined process itself
(:mod:`kprof_mcp.sandbox.__main__`): its own ``/proc`` when it has a PID namespace, and a private
``/dev/shm`` only where it has a mount namespace of its own.

Behind Nsight Compute the profiler runs inside the confinement, beside its target: the runner wraps
``PREFIX python -m kprof_mcp.child ...`` as a whole (Nsight Systems not yet, :data:`CONFINED_PROFILERS`;
its policies are ready: TCP inside the job's network namespace, a ``/tmp`` of the job's own,
:data:`PROFILER_TMP`, and the chmod family a no-op). The policy then also grants the
directory of the profiler's report (:data:`OUTPUT_RIGHTS` only: no link, FIFO or socket the server's
post-processing could be led through) and ``proc_write``: the profiled target is the profiler's child,
another pid than the confined process, and CUDA fails to initialise (error 304) unless it may write
beneath ``/proc`` (docs/evidence/sandbox/ncu-probe-h200-2026-11-26.log). The supervisor grants that
only as root, on a ``/proc`` of the job's own whose every entry but the processes' directories is
read-only (see :mod:`kprof_mcp.sandbox.__main__`); never to another user, whose ``/proc`` is the machine's.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

from . import limits, memory
from .selfpaths import protected_paths, writable_under

# Read-only system paths every Python/CUDA program needs (those that exist are allowed); /proc is
# added by the supervisor in the confined process (a fresh one when it has a PID namespace). Not /dev:
# as another user than root (no private /dev/shm) it let a command read every same-user /dev/shm file
# (issue 38, the fresh probe's F4); of /dev a program gets the device files below and, from the
# supervisor, its job's own /dev/shm (/dev/fd and /dev/std* lead into /proc, which it has).
SYSTEM_READ = (
    "/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc", "/opt",
    "/sys", "/run", "/var/lib/nvidia", "/nix", "/snap",
)  # fmt: skip
# Device nodes a program opens (read and write): the usual character devices and the GPU's.
DEVICE_FILES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty")
DEVICE_GLOBS = ("/dev/nvidia*", "/dev/nvidia-caps/*", "/dev/dri/*")
# Caches a program writes under the home directory otherwise: a command's inside its private tmp (gone
# with the job), a kernel child's in a cache of the workspace's own that no unconfined process reads
# (a poisoned Triton launcher or CUDA JIT cache entry would run wherever the cache is shared).
CACHE_VARS = {
    "TRITON_CACHE_DIR": "triton",
    "TRITON_HOME": "triton-home",
    "TORCHINDUCTOR_CACHE_DIR": "inductor",
    "TORCH_EXTENSIONS_DIR": "torch_extensions",
    "CUDA_CACHE_PATH": "nv-compute-cache",
    "XDG_CACHE_HOME": "xdg-cache",
    "MPLCONFIGDIR": "matplotlib",
}
# Environment variables a confined process does not get: the server's bearer token and whatever names a
# secret (a cloud key, a password) — it could otherwise call the server's own tools or leave with them.
SECRET_WORDS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "API_KEY", "ACCESS_KEY", "PRIVATE_KEY")
CAP_SYS_ADMIN = 21


@dataclass
class Policy:
    """What the confined process may read (and execute) and write: directories, each with everything
    beneath it, or single files; ``devices``: device files opened for writing. ``isolate``: give it a
    PID and mount namespace of its own where the supervisor may (root): a fresh ``/proc`` showing only
    its job's processes and a private ``/dev/shm``. ``keep_caps``: the only capabilities left in its
    bounding set (none unless a profiler's counters need one). ``network``: TCP (bind, connect) allowed;
    without it Landlock (ABI 4) refuses both, and where namespaces are had it gets a network namespace
    of its own (no interface but a loopback that is down: no UDP out either). ``private_proc``: without
    ``isolate``, as root, a ``/proc`` of its own that shows no process outside its domain.
    ``max_tasks``, ``max_file_bytes``, ``max_memory``: its limits (:mod:`kprof_mcp.sandbox.limits`,
    :mod:`kprof_mcp.sandbox.memory`; 0: none; the memory one is all jobs' together).
    ``outputs``: directories a profiler inside the confinement writes its report in (files and
    directories only: :data:`~kprof_mcp.sandbox.OUTPUT_RIGHTS`). ``proc_write``: files beneath ``/proc``
    writable (a profiled target, the profiler's child, writes its own ``/proc/<pid>``), granted by the
    supervisor only where that is safe (:func:`kprof_mcp.sandbox.__main__.proc_rights`).
    ``tcp_inside``: TCP between the job's own processes (Nsight Systems binds a loopback socket to
    talk to its target): Landlock leaves TCP alone, but the job has a network namespace of its own
    whose loopback is up and nothing else (as root; a root job without one gets no TCP at all); for
    another user than root, who can have no namespace, TCP on the machine's network.
    ``tmp_mounts``: directories a profiler inside writes whatever ``TMPDIR`` says (Nsight Systems:
    ``/tmp``, :data:`PROFILER_TMP`), each covered in the job's mount namespace (root) by a tmpfs of its
    own, the policy's paths beneath shown again (read-only where only read); without a mount
    namespace nothing is granted there (:func:`kprof_mcp.sandbox.mounts.tmp_rights`). ``chmod_allowed``:
    the seccomp filter lets the chmod family through (behind Nsight Systems, which records nothing once
    its chmod fails or has no effect: :data:`kprof_mcp.sandbox.seccomp.CHMOD`); chown, utime and xattr
    stay refused."""

    read: list[str] = field(default_factory=list)
    write: list[str] = field(default_factory=list)
    devices: list[str] = field(default_factory=list)
    isolate: bool = True
    keep_caps: list[int] = field(default_factory=list)
    network: bool = False
    private_proc: bool = False
    max_tasks: int = 0
    max_file_bytes: int = 0
    max_memory: int = 0
    outputs: list[str] = field(default_factory=list)
    proc_write: bool = False
    tcp_inside: bool = False
    tmp_mounts: list[str] = field(default_factory=list)
    chmod_allowed: bool = False

    def to_json(self) -> str:
        return json.dumps(self.__dict__)

    @classmethod
    def from_json(cls, text: str) -> Policy:
        d = json.loads(text)
        return cls(
            read=list(d["read"]),
            write=list(d["write"]),
            devices=list(d.get("devices", [])),
            isolate=bool(d.get("isolate", True)),
            keep_caps=[int(c) for c in d.get("keep_caps", [])],
            network=bool(d.get("network", False)),
            private_proc=bool(d.get("private_proc", False)),
            max_tasks=int(d.get("max_tasks", 0)),
            max_file_bytes=int(d.get("max_file_bytes", 0)),
            max_memory=int(d.get("max_memory", 0)),
            outputs=list(d.get("outputs", [])),
            proc_write=bool(d.get("proc_write", False)),
            tcp_inside=bool(d.get("tcp_inside", False)),
            tmp_mounts=[str(p) for p in d.get("tmp_mounts", [])],
            chmod_allowed=bool(d.get("chmod_allowed", False)),
        )


# The operator's choice (the server's --commands-network): whether a user's command may use TCP
# (torch.distributed's TCPStore, a local service). Kernel children never may.
_commands_network = False


def set_commands_network(on: bool) -> None:
    global _commands_network
    _commands_network = bool(on)


def commands_network() -> bool:
    return _commands_network


@dataclass(frozen=True)
class KernelScope:
    """Where a server's kernel children may write and read: the workspace (read: its packages), the
    profiles' root (write), the operator's kernel directories (read), and a cache of their own."""

    workspace: Path
    out_root: Path
    kernel_dirs: tuple[Path, ...] = ()

    @property
    def cache_dir(self) -> Path:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kprof-mcp" / "confined"
        return base / hashlib.sha256(str(self.workspace).encode()).hexdigest()[:16]


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


def _reads(workspace: Path, prefix: list[str] | None, extra: tuple[Path, ...] = ()) -> list[str]:
    kprof_root = str(Path(__file__).resolve().parents[2])
    read = [str(workspace), *map(str, extra), kprof_root, *_python_dirs()]
    read += [p for p in SYSTEM_READ if os.path.exists(p)]
    if prefix:
        root = _tool_root(prefix[0])
        if root and root != "/":
            read.append(root)
    return sorted(set(read))


def _devices() -> list[str]:
    devices = [p for p in DEVICE_FILES if os.path.exists(p)]
    for pattern in DEVICE_GLOBS:
        devices.extend(sorted(glob.glob(pattern)))
    return devices


def _keep_caps(prefix: list[str] | None) -> list[int]:
    """CAP_SYS_ADMIN for a process an Nsight Compute prefix reads counters of, where the driver lets only
    admins read them (``RmProfilingAdminOnly: 1``); nothing otherwise."""
    if not prefix or not Path(prefix[0]).name.startswith("ncu"):
        return []
    try:
        params = Path("/proc/driver/nvidia/params").read_text()
    except OSError:
        return []
    return [CAP_SYS_ADMIN] if "RmProfilingAdminOnly: 1" in params else []


# The flags that name a profiler's report (``ncu --export BASE``, ``nsys profile -o BASE``).
OUTPUT_FLAGS = ("-o", "--output", "--export")


def profiler_outputs(prefix: list[str] | None, never: tuple[Path, ...] = ()) -> list[str]:
    """The directories a profiler ``prefix`` writes its report in (the parent of each ``-o``/``--output``/
    ``--export`` value: the engine's scratch of the run). A directory that is not there, is a link, is
    ``/`` or a top-level directory, or holds (or is) one of ``never`` (the workspace, the home directory)
    is never granted."""
    outs: list[str] = []
    args = list(prefix or [])
    for i, a in enumerate(args[1:], 1):
        value = args[i + 1] if a in OUTPUT_FLAGS and i + 1 < len(args) else None
        for flag in OUTPUT_FLAGS:
            if a.startswith(flag + "=") and flag.startswith("--"):
                value = a[len(flag) + 1 :]
        if not value or not os.path.isabs(value):
            continue
        d = Path(os.path.normpath(value)).parent
        if len(d.parts) < 3 or d.is_symlink() or not d.is_dir():
            continue
        if any(d == n or d in n.parents for n in (Path.home(), *never)):
            continue
        if str(d) not in outs:
            outs.append(str(d))
    return outs


# Profilers confined with their target (the runner wraps ``PREFIX python -m kprof_mcp.child ...`` as a
# whole): Nsight Compute, and Nsight Systems where a job has a mount namespace of its own
# (:func:`profiler_inside`): on an H100 (docs/evidence/sandbox/nsys-confined-h100-2026-11-26.log) it runs
# confined once the job has a /tmp of its own (tmp_mounts) and the seccomp filter lets its chmod through
# (chmod_allowed: refused, or made a no-op, it records nothing). Without a mount namespace nsys stays
# outside: behind it a kernel child runs unconfined and a command is confined without namespaces, with TCP
# and /dev/shm.
CONFINED_PROFILERS = ("ncu", "nsys")


def profiler_inside(prefix: list[str] | None) -> bool:
    """Whether a profiler prefix runs inside the confinement with its target (:data:`CONFINED_PROFILERS`;
    one that writes the machine's /tmp only where the job can have a /tmp of its own: :func:`own_mounts`)."""
    if not prefix or not Path(prefix[0]).name.startswith(CONFINED_PROFILERS):
        return False
    return not tmp_mounts(prefix) or own_mounts()


_own_mounts: bool | None = None


def own_mounts() -> bool:
    """Whether a job of this server gets a mount namespace of its own: root, and ``unshare(CLONE_NEWNS)``
    allowed (not in a container without CAP_SYS_ADMIN); tried once, in a child process."""
    global _own_mounts
    if _own_mounts is None:
        import subprocess

        code = "import ctypes, sys; sys.exit(ctypes.CDLL(None, use_errno=True).unshare(0x20000) != 0)"
        try:
            from ..protocol import python_argv

            cp = subprocess.run(python_argv(code=code), capture_output=True, timeout=30)
            _own_mounts = os.geteuid() == 0 and cp.returncode == 0
        except (OSError, subprocess.SubprocessError):
            _own_mounts = False
    return _own_mounts


def needs_tcp(prefix: list[str] | None) -> bool:
    """Whether a profiler prefix talks to its target over TCP: Nsight Systems does (``bind: Permission
    denied`` without it, docs/evidence/sandbox/profiler-probe-h200-2026-11-26-first.log); Nsight
    Compute does not."""
    return bool(prefix) and Path(prefix[0]).name.startswith("nsys")


def chmod_allowed(prefix: list[str] | None) -> bool:
    """Whether a profiler prefix stops recording when its chmod fails or has no effect (Nsight Systems:
    the filter lets the chmod family through behind it, :data:`kprof_mcp.sandbox.seccomp.CHMOD`)."""
    return bool(prefix) and Path(prefix[0]).name.startswith("nsys")


# What a profiler inside the confinement writes beneath the machine's /tmp whatever TMPDIR says: Nsight
# Systems (2025.3) makes /tmp/nsys-RunShellCommand-XXXXXX and /tmp/injection_config_XXXXXXXX (read by its
# target) and stops at "Cannot create CUDA config file" where it may not (/tmp/nvidia is not what it needs:
# docs/evidence/sandbox/nsys-confined-h100-2026-11-26.log). As root the supervisor covers /tmp with a tmpfs
# of the job's own in its mount namespace and binds the policy's paths beneath it back (read-only where the
# policy only reads them): other jobs' files beneath the real /tmp are out of sight and out of reach.
PROFILER_TMP = {"nsys": "/tmp"}


def tmp_mounts(prefix: list[str] | None) -> list[str]:
    """The directories a profiler ``prefix`` writes whatever TMPDIR says (:data:`PROFILER_TMP`)."""
    if not prefix:
        return []
    name = Path(prefix[0]).name
    return [t for p, t in PROFILER_TMP.items() if name.startswith(p)]


def command_policy(
    workspace: Path,
    cwd: Path,
    runs_dir: Path,
    private_tmp: Path,
    prefix: list[str] | None = None,
    out_root: Path | None = None,
    inside: bool | None = None,
) -> Policy:
    """The policy of one command: it writes in its working directory (but not in ``out/``, ``.git`` or
    the devlogs, see :func:`protected_paths`), its runs' directory under ``out/`` and its private tmp,
    and reads the workspace, Python and the system (and the install directory of a profiler that wraps
    it). TCP only when the operator allows it (:func:`set_commands_network`). Behind a profiler the
    profiler is confined with it, in the same namespaces, and writes its report in its directory
    (``outputs``); behind Nsight Systems TCP inside the job's own network namespace (``tcp_inside``) and
    a ``/tmp`` of its own (``tmp_mounts``). ``inside``: the profiler is confined with it (default:
    :func:`profiler_inside`); a profiler outside (Nsight Systems for now) gets the command as before:
    no namespaces, TCP and /dev/shm."""
    out_root = out_root or runs_dir.parent.parent
    protected, sealed = protected_paths(workspace, out_root)
    write = [*writable_under(cwd, protected, sealed), str(runs_dir), str(private_tmp)]
    if prefix and not (profiler_inside(prefix) if inside is None else inside):
        # the profiler outside, its injected libraries in the command: as verified on the GPU
        # (docs/evidence/sandbox/h200-2026-11-26.log), they share its pids, TCP and /dev/shm
        return Policy(
            read=_reads(workspace, prefix),
            write=[*write, *(["/dev/shm"] if os.path.isdir("/dev/shm") else [])],
            devices=_devices(),
            isolate=False,
            keep_caps=_keep_caps(prefix),
            network=True,
            max_tasks=limits.max_tasks(),
            max_memory=memory.max_memory(),
            max_file_bytes=limits.max_file_bytes([str(cwd), str(runs_dir), str(private_tmp)]),
        )
    return Policy(
        read=_reads(workspace, prefix),
        write=write,
        devices=_devices(),
        isolate=True,
        keep_caps=_keep_caps(prefix),
        network=commands_network(),
        outputs=profiler_outputs(prefix, (workspace, out_root)),
        proc_write=bool(prefix),
        tcp_inside=needs_tcp(prefix),
        tmp_mounts=tmp_mounts(prefix),
        chmod_allowed=chmod_allowed(prefix),
        max_tasks=limits.max_tasks(),
        max_memory=memory.max_memory(),
        max_file_bytes=limits.max_file_bytes([str(cwd), str(runs_dir), str(private_tmp)]),
    )


def kernel_policy(scope: KernelScope, jobs_dir: Path, prefix: list[str] | None = None) -> Policy:
    """The policy of a kernel child (a warm worker or a fresh process that imports workspace packages):
    it writes the profiles' root (its runs), its jobs' request/result directory and private tmp, and its
    own caches; it reads the workspace, the kernel directories, Python and the system. Behind a
    profiler (inside the confinement with it) it also writes the report's directory (``outputs``) and,
    where safe, beneath ``/proc`` (``proc_write``); no TCP but, behind Nsight Systems, inside its own
    network namespace (``tcp_inside``)."""
    write = [str(scope.out_root), str(jobs_dir), str(scope.cache_dir)]
    # No PID namespace: kprof's own process-tree handling and its tests follow a kernel child by its
    # pid, which one would hide; so it has the machine's pids (its /proc, as root, shows none outside
    # its domain: private_proc; and a private /dev/shm). No TCP at all.
    return Policy(
        read=_reads(scope.workspace, prefix, scope.kernel_dirs),
        write=write,
        devices=_devices(),
        isolate=False,
        keep_caps=_keep_caps(prefix),
        network=False,
        private_proc=True,
        outputs=profiler_outputs(prefix, (scope.workspace, scope.out_root)),
        proc_write=bool(prefix),
        tcp_inside=needs_tcp(prefix),
        tmp_mounts=tmp_mounts(prefix),
        chmod_allowed=chmod_allowed(prefix),
        max_tasks=limits.max_tasks(),
        max_memory=memory.max_memory(),
        max_file_bytes=limits.max_file_bytes(write),
    )


def confined_env(env: dict[str, str], private_tmp: Path, caches: Path | None = None) -> dict[str, str]:
    """A confined process's environment, without the server's secrets (:data:`SECRET_WORDS` in a name),
    with its temporary directory inside ``private_tmp`` and its compiler caches in ``caches`` (default:
    inside ``private_tmp``)."""
    out = {k: v for k, v in env.items() if not any(w in k.upper() for w in SECRET_WORDS)}
    tmp = private_tmp / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    for var in ("TMPDIR", "TEMP", "TMP"):
        out[var] = str(tmp)
    for var, name in CACHE_VARS.items():
        out[var] = str((caches or private_tmp / "cache") / name)
    return out


def command_env(env: dict[str, str], private_tmp: Path) -> dict[str, str]:
    """A command's environment (:func:`confined_env`, caches in its private tmp)."""
    return confined_env(env, private_tmp)


# ------------------------------------------------------------------ files of the server's own
_private: dict[object, Path] = {}


def _private_dir(key: object, prefix: str) -> Path:
    """A directory of this process (mode 0700) made on first use and removed at its exit."""
    if key not in _private or not _private[key].is_dir():
        import atexit
        import shutil
        import tempfile

        d = Path(tempfile.mkdtemp(prefix=prefix))
        atexit.register(shutil.rmtree, d, True)
        _private[key] = d
    return _private[key]


def write_policy(policy: Policy) -> Path:
    """``policy`` in a file of a directory no confined process may write (a confined process that
    rewrote the policy of the next one started would widen its own boundary)."""
    import tempfile

    fd, path = tempfile.mkstemp(dir=_private_dir("policies", "kprof-policies-"), suffix=".json")
    # Every path a write rule names resolved now: the supervisor then refuses a rule with a link on
    # its way (:func:`kprof_mcp.sandbox._open_no_link`), one put there since by a concurrent job.
    policy = replace(
        policy,
        write=[os.path.realpath(p) for p in policy.write],
        outputs=[os.path.realpath(p) for p in policy.outputs],
    )
    with os.fdopen(fd, "w") as f:
        f.write(policy.to_json())
    return Path(path)


def jobs_dir(scope: KernelScope) -> Path:
    """The directory of a scope's kernel jobs (their requests, results, private tmp): the one
    temporary directory its kernel children may write."""
    return _private_dir(scope, "kprof-kernels-")
