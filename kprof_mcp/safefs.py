"""Files under a tree whose content is not trusted (the workspace: often a cloned repository),
read and written without ever following a symbolic link.

Resolving a path and comparing it with the root is not enough: a link planted at any component
(a ``docs`` directory, a devlog's temporary name, a profile's ``params.json``) would still be
followed by the ``open`` that comes after the check. Here every path is taken lexically under its
root (no ``..`` out of it), and opened one component at a time relative to the directory handle of
the one before, with ``O_NOFOLLOW``: a link anywhere is refused with :class:`UnsafePath`, whose
message names the component relative to the root and never where the link points. New files are
created with ``O_CREAT | O_EXCL | O_NOFOLLOW`` and renamed into place within the same directory
handle. The root itself is the operator's choice (``--workspace``) and is trusted as given.

POSIX only (``dir_fd`` support), like the rest of the server.
"""

from __future__ import annotations

import os
import secrets
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

# repr(value) cut to a limit: error messages quote input, never all of it. Defined with the models
# (the bottom layer, which imports nothing else from kprof) and used from here by everything else.
from .models.options import clip  # noqa: F401

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
MAX_TREE_DEPTH = 64  # directories below a package's top


class UnsafePath(Exception):
    """A path that leaves its root, goes through a symbolic link, or is not the kind of file
    expected. The message is safe to show (relative names only, input clipped)."""


class Missing(UnsafePath):
    """A component of the path does not exist."""


def parts_under(root: Path, path: str | os.PathLike[str]) -> list[str]:
    """The components of ``path`` (absolute, or relative to ``root``) below ``root``, taken
    lexically (``a/b/../c`` is ``a/c``). Raises :class:`UnsafePath` when it is not under ``root``."""
    root_s = os.path.normpath(os.fspath(root))
    raw = os.fspath(path)
    if "\x00" in raw:
        raise UnsafePath("the path contains a NUL byte")
    full = os.path.normpath(raw if os.path.isabs(raw) else os.path.join(root_s, raw))
    if full != root_s and not full.startswith(root_s.rstrip(os.sep) + os.sep):
        raise UnsafePath(f"{clip(raw)} is outside {root_s}")
    rel = os.path.relpath(full, root_s)
    return [] if rel == "." else rel.split(os.sep)


def root_of(path: str | os.PathLike[str], roots: list[Path]) -> Path | None:
    """The first of ``roots`` that ``path`` lies lexically under (see :func:`parts_under`), or None."""
    for r in roots:
        try:
            parts_under(r, path)
            return Path(r)
        except UnsafePath:
            continue
    return None


def _shown(parts: list[str], i: int) -> str:
    return clip("/".join(parts[: i + 1]) or ".")


def _fail(dir_fd: int, parts: list[str], i: int, e: OSError, want: str) -> UnsafePath:
    """The reason opening ``parts[i]`` (relative to ``dir_fd``) failed, in words."""
    import errno

    try:
        st = os.stat(parts[i], dir_fd=dir_fd, follow_symlinks=False)
    except OSError as e2:
        if e2.errno == errno.ENAMETOOLONG or e.errno == errno.ENAMETOOLONG:
            return UnsafePath(
                f"{_shown(parts, i)}: a name in the path is longer than the file system allows "
                "(255 bytes a component)"
            )
        return Missing(f"{_shown(parts, i)} does not exist")
    if stat.S_ISLNK(st.st_mode):
        return UnsafePath(
            f"{_shown(parts, i)} is a symbolic link: kprof reads and writes only real files and "
            "directories under the workspace, never through a link (replace the link with the "
            "directory or file itself)"
        )
    if want == "dir" and not stat.S_ISDIR(st.st_mode):
        return UnsafePath(f"{_shown(parts, i)} is not a directory")
    return UnsafePath(f"{_shown(parts, i)}: {e.strerror or e}")


@contextmanager
def open_dir(root: Path, parts: list[str], create: bool = False) -> Iterator[int]:
    """A handle on the directory ``root/parts...``, every component opened without following
    links (created first when ``create``). Closed on exit."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for i, name in enumerate(parts):
            if create:
                try:
                    os.mkdir(name, 0o777, dir_fd=fd)
                except FileExistsError:
                    pass
                except OSError as e:
                    raise _fail(fd, parts, i, e, "dir") from None
            try:
                nfd = os.open(name, _DIR, dir_fd=fd)
            except OSError as e:
                raise _fail(fd, parts, i, e, "dir") from None
            os.close(fd)
            fd = nfd
        yield fd
    finally:
        os.close(fd)


def make_dirs(root: Path, path: str | os.PathLike[str]) -> Path:
    """``mkdir -p`` under ``root`` with no component a link; returns the (lexical) path."""
    parts = parts_under(root, path)
    with open_dir(root, parts, create=True):
        pass
    return Path(root, *parts)


def make_new_dir(root: Path, path: str | os.PathLike[str]) -> Path:
    """Parents as :func:`make_dirs`, the last component created here and now (it must not exist)."""
    parts = parts_under(root, path)
    if not parts:
        raise UnsafePath(f"{clip(str(path))} is the root itself")
    with open_dir(root, parts[:-1], create=True) as fd:
        try:
            os.mkdir(parts[-1], 0o777, dir_fd=fd)
        except OSError as e:
            raise _fail(fd, parts, len(parts) - 1, e, "dir") from None
    return Path(root, *parts)


def kind(root: Path, path: str | os.PathLike[str]) -> str:
    """'dir', 'file', 'link', 'other' or 'missing' (it, or a parent) for the last component; the
    parents must be real directories (:class:`UnsafePath` otherwise)."""
    parts = parts_under(root, path)
    if not parts:
        return "dir"
    try:
        with open_dir(root, parts[:-1]) as fd:
            try:
                st = os.stat(parts[-1], dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                return "missing"
            except OSError as e:
                raise _fail(fd, parts, len(parts) - 1, e, "file") from None
    except Missing:
        return "missing"
    mode = st.st_mode
    return (
        "link"
        if stat.S_ISLNK(mode)
        else "dir"
        if stat.S_ISDIR(mode)
        else "file"
        if stat.S_ISREG(mode)
        else "other"
    )


def check_file(root: Path, path: str | os.PathLike[str]) -> Path:
    """A regular file, reached through real directories, itself no link."""
    parts = parts_under(root, path)
    k = kind(root, path)
    if k != "file":
        raise UnsafePath(
            f"{_shown(parts, len(parts) - 1)} "
            + {
                "missing": "not found",
                "dir": "is a directory, not a file",
                "link": "is a symbolic link: kprof reads and runs only real files under the workspace, never "
                "through a link (replace the link with the file itself)",
                "other": "is not a regular file",
            }[k]
        )
    return Path(root, *parts)


def check_tree(root: Path, path: str | os.PathLike[str]) -> Path:
    """A package (a directory or one file) reached through real directories, with no link, FIFO,
    socket or device at any depth inside it: what will be imported and run is what lies under
    the root, and nothing in it can block a reader."""
    parts = parts_under(root, path)
    k = kind(root, path)
    if k == "file":
        return Path(root, *parts)
    if k != "dir":
        check_file(root, path)  # raises with the reason
    full = Path(root, *parts)
    # An explicit stack, not os.walk (recursive in Python 3.11: 1,500 nested directories raised
    # RecursionError, the fourth probe's P4-10 class), and a depth no package needs.
    stack = [(full, 0)]
    while stack:
        dirpath, depth = stack.pop()
        if depth > MAX_TREE_DEPTH:
            raise UnsafePath(
                f"{clip(str(dirpath.relative_to(root)))} is nested over {MAX_TREE_DEPTH} directories deep "
                "inside the package: kprof loads no such tree"
            )
        try:
            with os.scandir(dirpath) as it:
                names = [e.name for e in it]
        except OSError:
            continue  # gone, or unreadable: as os.walk did
        for name in names:
            p = Path(dirpath, name)
            try:
                mode = os.lstat(p).st_mode
            except FileNotFoundError:
                continue
            if stat.S_ISLNK(mode):
                raise UnsafePath(
                    f"{clip(str(p.relative_to(root)))} is a symbolic link inside the package: kprof "
                    "loads only real files under the workspace (replace the link with the file)"
                )
            if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                # A FIFO would block whoever opens it (the server included) for good; a device
                # or socket is no source either.
                raise UnsafePath(
                    f"{clip(str(p.relative_to(root)))} is not a regular file or directory (a FIFO, "
                    "socket or device) inside the package: kprof loads only real files (remove it)"
                )
            if stat.S_ISDIR(mode):
                stack.append((p, depth + 1))
    return full


def _open_file(fd: int, parts: list[str], flags: int, mode: int = 0o666) -> int:
    try:
        return os.open(parts[-1], flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=fd)
    except OSError as e:
        raise _fail(fd, parts, len(parts) - 1, e, "file") from None


def read_bytes(root: Path, path: str | os.PathLike[str], limit: int = 256 << 20) -> bytes:
    """The content of a regular file under ``root`` (no link anywhere; at most ``limit`` bytes)."""
    parts = parts_under(root, path)
    if not parts:
        raise UnsafePath("the root is a directory, not a file")
    with open_dir(root, parts[:-1]) as dfd:
        ffd = _open_file(dfd, parts, os.O_RDONLY | os.O_NONBLOCK)
        try:
            st = os.fstat(ffd)
            if not stat.S_ISREG(st.st_mode):
                raise UnsafePath(f"{_shown(parts, len(parts) - 1)} is not a regular file")
            if st.st_size > limit:
                raise UnsafePath(
                    f"{_shown(parts, len(parts) - 1)} is {st.st_size} bytes, over the {limit}-byte limit"
                )
            with os.fdopen(ffd, "rb", closefd=False) as f:
                return f.read(limit + 1)[:limit]
        finally:
            os.close(ffd)


def read_text(root: Path, path: str | os.PathLike[str], limit: int = 256 << 20) -> str:
    return read_bytes(root, path, limit).decode("utf-8", errors="replace")


def write_atomic(
    root: Path, path: str | os.PathLike[str], data: bytes | str, make_parents: bool = False
) -> Path:
    """Write a new temporary file (``O_CREAT|O_EXCL|O_NOFOLLOW``, a random name) beside ``path``
    and rename it over ``path`` within one directory handle: readers see the old or the new
    content, and a link planted at ``path`` or at any temporary name is replaced, never followed."""
    parts = parts_under(root, path)
    if not parts:
        raise UnsafePath("the root is a directory, not a file")
    payload = data.encode() if isinstance(data, str) else data
    with open_dir(root, parts[:-1], create=make_parents) as dfd:
        tmp = f".{parts[-1][:200]}.{os.getpid()}.{secrets.token_hex(6)}.tmp"
        ffd = _open_file(dfd, parts[:-1] + [tmp], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            with os.fdopen(ffd, "wb") as f:
                f.write(payload)
            os.replace(tmp, parts[-1], src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=dfd)
            except OSError:
                pass
            raise
    return Path(root, *parts)


def rename_in_place(root: Path, src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> Path:
    """Rename ``src`` to ``dst``, both in the same directory under ``root`` (no link on the way)."""
    s, d = parts_under(root, src), parts_under(root, dst)
    if not s or s[:-1] != d[:-1]:
        raise UnsafePath("a rename stays within one directory")
    with open_dir(root, s[:-1]) as dfd:
        os.rename(s[-1], d[-1], src_dir_fd=dfd, dst_dir_fd=dfd)
    return Path(root, *d)


def list_dir(root: Path, path: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """(name, kind) of each entry of a real directory, kinds as :func:`kind` (links are 'link')."""
    parts = parts_under(root, path)
    out = []
    with open_dir(root, parts) as fd:
        for e in os.scandir(fd):
            out.append(
                (
                    e.name,
                    "link"
                    if e.is_symlink()
                    else "dir"
                    if e.is_dir(follow_symlinks=False)
                    else "file"
                    if e.is_file(follow_symlinks=False)
                    else "other",
                )
            )
    return sorted(out)


# A run file's JSON, parsed by the server: what the bytes cap leaves still costs the server ~70
# bytes of Python object per ``{}`` (60 MiB of them took it past 19 GB: issue 38, the fresh probe's
# F3), so the containers are counted (bytes ``{`` and ``[``, strings included: an upper bound) and
# the nesting measured before any parser sees the text.
JSON_DEPTH = 64
_STRING = None


def check_json(data: bytes, name: str, containers: int, depth: int = JSON_DEPTH) -> str:
    """``data`` as text once it holds at most ``containers`` objects/arrays nested at most ``depth``
    deep; else :class:`UnsafePath` naming ``name``, its size and what is over."""
    global _STRING
    n = data.count(b"{") + data.count(b"[")
    if n > containers or data.count(b"}") + data.count(b"]") > containers:
        raise UnsafePath(
            f"{name} ({len(data)} bytes) holds {n} JSON objects/arrays, over the {containers} "
            "that kprof reads from a run file: not a file kprof wrote"
        )
    if n > depth:
        import re

        if _STRING is None:
            _STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
        level = 0
        for c in _STRING.sub(b"", data).translate(None, delete=bytes(set(range(256)) - set(b"{}[]"))):
            level += 1 if c in (0x7B, 0x5B) else -1
            if level > depth:
                raise UnsafePath(
                    f"{name} ({len(data)} bytes) is nested over {depth} levels deep: not a file kprof wrote"
                )
    return data.decode("utf-8", errors="replace")


def read_json_text(
    root: Path, path: str | os.PathLike[str], limit: int, containers: int, depth: int = JSON_DEPTH
) -> str:
    """:func:`read_text` of a JSON run file, refused (:class:`UnsafePath`) when it is over ``limit``
    bytes, ``containers`` objects/arrays or ``depth`` levels (see :func:`check_json`)."""
    parts = parts_under(root, path)
    name = _shown(parts, len(parts) - 1) if parts else str(path)
    return check_json(read_bytes(root, path, limit), name, containers, depth)
