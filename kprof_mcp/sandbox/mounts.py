"""The mounts the supervisor makes in a job's own mount namespace (root; :mod:`kprof_mcp.sandbox.__main__`):
a ``/proc`` of its own made read-only but for the processes' directories (:func:`lock_proc`), and a tmpfs of
its own over a directory a profiler writes whatever ``TMPDIR`` says (:func:`cover_tmp`: ``/tmp`` behind
Nsight Systems), the policy's paths beneath it bound back."""

from __future__ import annotations

import ctypes
import os
import stat

from . import Policy, _libc

_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_REMOUNT, _MS_BIND = 1, 2, 4, 8, 32, 4096
_MS_REC, _MS_PRIVATE = 0x4000, 1 << 18


def _ok(rc: int) -> bool:
    return rc == 0


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str | None = None) -> bool:
    libc = _libc()
    enc = lambda s: s.encode() if s is not None else None  # noqa: E731
    return _ok(libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)))


def lock_proc(root: str = "/proc") -> bool:
    """On a ``/proc`` this mount namespace mounted itself: bind every entry but the processes'
    directories read-only onto itself (links such as ``self``, ``mounts``, ``net`` lead into one and
    are left). What stays writable beneath it is the files of the processes it shows. True when
    every entry was made read-only."""
    try:
        names = os.listdir(root)
    except OSError:
        return False
    ro = _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
    ok = True
    for name in names:
        path = os.path.join(root, name)
        if name.isdigit() or os.path.islink(path):
            continue
        if not (_mount(path, path, None, _MS_BIND | _MS_REC) and _mount("none", path, None, ro)):
            ok = False
    return ok


def _under(path: str, root: str) -> bool:
    return path != root and path.startswith(root.rstrip("/") + "/")


def _shown_again(policy: Policy, target: str) -> list[tuple[str, bool]]:
    """The policy's paths beneath ``target`` to bind back over its tmpfs, shallowest first, each with
    whether it is writable (written, a report's directory, a device); one beneath a path already bound
    writable, or read-only beneath a read-only one, comes with it."""
    rw = {os.path.normpath(p) for p in (*policy.write, *policy.outputs, *policy.devices)}
    paths = {os.path.normpath(p) for p in policy.read} | rw
    shown: list[tuple[str, bool]] = []
    for p in sorted((p for p in paths if _under(p, target)), key=lambda p: (p.count("/"), p)):
        above = [w for q, w in shown if _under(p, q)]
        if not (above and (above[-1] or p not in rw)):
            shown.append((p, p in rw))
    return shown


def _bind_back(path: str, fd: int, writable: bool) -> bool:
    """Bind the machine's ``path`` (opened as ``fd`` before the tmpfs covered it) back at ``path``: the
    directories on the way (and, for a file, the file) made where missing, never through a link;
    read-only unless ``writable`` (nosuid, nodev)."""
    is_dir = os.path.isdir(f"/proc/self/fd/{fd}")
    parts = [c for c in path.split("/") if c]
    cur = os.open("/", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for i, comp in enumerate(parts):
            last = i == len(parts) - 1
            flags = os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC | (os.O_DIRECTORY if is_dir or not last else 0)
            try:
                nxt = os.open(comp, flags, dir_fd=cur)
            except FileNotFoundError:
                if last and not is_dir:
                    os.close(
                        os.open(comp, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, 0o600, dir_fd=cur)
                    )
                else:
                    os.mkdir(comp, 0o755, dir_fd=cur)
                nxt = os.open(comp, flags, dir_fd=cur)
            os.close(cur)
            cur = nxt
        if not _mount(f"/proc/self/fd/{fd}", f"/proc/self/fd/{cur}", None, _MS_BIND):
            return False
        ro = 0 if writable else _MS_RDONLY
        return _mount("none", path, None, _MS_REMOUNT | _MS_BIND | _MS_NOSUID | _MS_NODEV | ro)
    except OSError:
        return False
    finally:
        os.close(cur)


def cover_tmp(policy: Policy) -> bool:
    """In a mount namespace of the job's own whose mounts are private (root): a fresh tmpfs over each
    directory of the policy's ``tmp_mounts`` (``/tmp`` behind Nsight Systems), then the policy's paths
    beneath it bound back from the machine's (each opened before, without following a link; read-only
    where the policy only reads it): the profiler writes its files there, other jobs' files beneath the
    real ``/tmp`` are out of sight. True when every one was made."""
    ok = bool(policy.tmp_mounts)
    for target in policy.tmp_mounts:
        kept = []
        for path, writable in _shown_again(policy, target):
            try:
                fd = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
            except OSError:
                continue  # not there: not shown
            if stat.S_ISLNK(os.fstat(fd).st_mode):
                os.close(fd)  # a link: not shown (nor granted)
            else:
                kept.append((path, fd, writable))
        try:
            fd = os.open(target, os.O_PATH | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            fd = -1
        try:
            made = fd >= 0 and _mount(
                "tmpfs", f"/proc/self/fd/{fd}", "tmpfs", _MS_NOSUID | _MS_NODEV, "mode=1777"
            )
            ok = ok and made and all([_bind_back(p, f, w) for p, f, w in kept])
        finally:
            for _, f, _ in kept:
                os.close(f)
            if fd >= 0:
                os.close(fd)
    return ok


def tmp_rights(policy: Policy, own_tmp: bool) -> tuple[list[str], str | None]:
    """The directories of the policy's ``tmp_mounts`` a confined process may write where ``own_tmp``
    (its own tmpfs there: files and directories, no link, FIFO, socket or device node), and the note
    that says why none is: no mount namespace of its own made them."""
    if not policy.tmp_mounts or own_tmp:
        return list(policy.tmp_mounts), None
    return [], (
        f"kprof sandbox: {', '.join(policy.tmp_mounts)} not writable behind the profiler (no mount namespace "
        "of its own): Nsight Systems may stop at 'Cannot create CUDA config file'"
    )
