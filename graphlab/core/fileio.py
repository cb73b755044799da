"""Writing a user's file atomically, the way an editor saves it; reading one with a size bound.

The text goes to a temporary file in the same folder, is flushed to disk, then renamed over the
target, so a crash or a full disk leaves either the old file or the new one, never half of each.
What a plain ``tempfile.mkstemp`` + rename gets wrong, and this does not:

- an existing file keeps its permission mode (and, where allowed, its owner and group); a new file
  gets ``0o666`` minus the umask (0644 under umask 022), as ``open(path, "w")`` would give, not
  mkstemp's 0600;
- a symlink stays a link: the file it points to is replaced (atomically), not the link;
- the temporary name is short (``.<first 32 characters>.<host>-<pid>-<12 hex>.tmp``), so a target
  whose name is close to the 255-byte NAME_MAX still saves; it names the process that wrote it, so
  the next save into the folder deletes what a killed process left (:mod:`graphlab.core.leftovers`);
- a full or read-only file system, a missing permission or a file size limit gives a
  :class:`~graphlab.core.errors.FileWriteError` naming the file and the fix, not a raw OSError.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path

from graphlab.core.errors import FileWriteError
from graphlab.core.leftovers import owner_tag, remove_stale

__all__ = ["FileTooLargeError", "atomic_write_text", "read_limited", "write_error", "write_fix"]

#: Characters of the target's name kept in the temporary name (a stray temp file says whose it was).
_KEPT = 32
#: A temporary name this module makes: ``.<up to 32 characters>.<host>-<pid>-<12 hex>.tmp``.
_OWN_TEMP = r"\..{{1,%s}}\.{owner}-[0-9a-f]{{12}}\.tmp".replace("%s", str(_KEPT))
#: What to do about a write that failed with these errors.
_FIXES = {
    errno.ENOSPC: "the file system is full; free some space or choose another location",
    errno.EDQUOT: "the disk quota is used up; free some space or choose another location",
    errno.EROFS: "the file system is read-only; choose a writable location",
    errno.EFBIG: "the file is larger than the file system or this process's file size limit (ulimit -f) allows; "
    "raise the limit or choose another location",
    errno.EACCES: "no permission to write there; choose a writable location or change the folder's permissions",
    errno.EPERM: "the operation is not permitted there; choose a writable location",
    errno.ENOENT: "the folder does not exist; create it first or choose another location",
    errno.ENOTDIR: "a part of the path is a file, not a folder; choose another location",
}


def atomic_write_text(path: str | os.PathLike[str], text: str, *, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically; return the path of the file written (a link's target).

    Raises OSError naming ``path`` (not the temporary name) when the folder is missing or not
    writable; the old file is then untouched and no temporary file is left behind.
    """
    target = Path(path)
    real = Path(os.path.realpath(target))
    if real.is_symlink():  # realpath gave up: the links go round in a circle
        raise OSError(errno.ELOOP, "too many levels of symbolic links", str(target))
    try:
        old = real.stat()
    except FileNotFoundError:
        old = None
    except OSError as exc:
        raise _named(exc, target) from exc
    if old is not None and not stat.S_ISREG(old.st_mode):  # OSError(EISDIR) is an IsADirectoryError
        raise OSError(errno.EISDIR if stat.S_ISDIR(old.st_mode) else errno.EINVAL, "not a regular file", str(target))
    remove_stale(real.parent, _OWN_TEMP)  # what killed saves left in this folder
    tmp = real.with_name(f".{real.name[:_KEPT]}.{owner_tag()}-{secrets.token_hex(6)}.tmp")
    # a new file: 0o666 minus the umask, applied by the kernel; an existing one: no wider than it was
    create_mode = 0o666 if old is None else stat.S_IMODE(old.st_mode) & 0o777
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), create_mode)
    except OSError as exc:
        raise _named(exc, target) from exc
    try:
        with os.fdopen(fd, "w", encoding=encoding, newline="") as handle:
            handle.write(text)
            handle.flush()
            if old is not None:
                _keep_owner_and_mode(handle.fileno(), old)
            os.fsync(handle.fileno())
        tmp.replace(real)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise _named(exc, target) from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _sync_folder(real.parent)
    return real


def _keep_owner_and_mode(fd: int, old: os.stat_result) -> None:
    """Give the new file the old one's owner, group and mode (owner and group only where allowed)."""
    if hasattr(os, "fchown") and (old.st_uid, old.st_gid) != (os.geteuid(), os.getegid()):
        with contextlib.suppress(PermissionError):  # only root may give a file away; a group we are in is fine
            os.fchown(fd, old.st_uid, old.st_gid)
    if hasattr(os, "fchmod"):
        os.fchmod(fd, stat.S_IMODE(old.st_mode))  # after chown, which clears setuid/setgid bits


def _sync_folder(folder: Path) -> None:
    """Flush the rename to disk (best effort: some file systems cannot open a folder)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_fix(code: int | None) -> str:
    """What to do about a write that failed with errno ``code`` (a full disk, a read-only file system...)."""
    return _FIXES.get(code or 0, "choose another location")


def write_error(exc: OSError, path: Path | str, what: str = "write") -> FileWriteError:
    """A :class:`FileWriteError` for ``exc``, naming ``path`` (not a temporary name) and the fix."""
    code = exc.errno
    reason = exc.strerror or (os.strerror(code) if code is not None else str(exc))
    fix = write_fix(code)
    message = f"cannot {what} {path}: {reason}; {fix}; nothing was changed there"
    return FileWriteError(message, path=str(path), errno=code)


def _named(exc: OSError, target: Path) -> OSError:
    """The same failure, naming the file the caller asked for rather than the temporary name, with the fix."""
    return write_error(exc, target, "save")


# --- reading -------------------------------------------------------------------------------------


class FileTooLargeError(OSError):
    """A file holds more bytes than its reader takes (``errno.EFBIG``; ``strerror`` says how many)."""


def read_limited(source: str | os.PathLike[str] | int, *, limit: int) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes: the one way graph files and manifests are read.

    ``source`` is a path, or a descriptor already open for reading (left open: the caller opened
    it, for instance after checking where it leads, so nothing can swap the file in between).
    The size a file reports is not trusted: ``/dev/zero`` and ``/proc`` files report 0, a file can
    grow while read. So at most ``limit + 1`` bytes are read, and anything but a regular file (a
    FIFO would block forever, a device never ends, a folder has no bytes) is refused at once: the
    path is opened without blocking and checked with ``fstat`` before the first read.

    Raises :class:`FileTooLargeError` past ``limit``, and OSError naming the path otherwise.
    """
    if isinstance(source, int):
        return _read_open(source, limit, f"descriptor {source}")
    name = os.fsdecode(source)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(source, flags)
    try:
        return _read_open(fd, limit, name)
    finally:
        os.close(fd)


def _read_open(fd: int, limit: int, name: str) -> bytes:
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise OSError(errno.EINVAL, f"not a regular file ({_file_kind(info.st_mode)})", name)
    if info.st_size > limit:
        raise FileTooLargeError(errno.EFBIG, f"file is {info.st_size:,} bytes, over the {limit:,} limit", name)
    chunks: list[bytes] = []
    left = limit + 1
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    if left <= 0:
        reported = f"more than the {info.st_size:,} bytes it reports"
        raise FileTooLargeError(errno.EFBIG, f"file is over the {limit:,} limit ({reported})", name)
    return b"".join(chunks)


def _file_kind(mode: int) -> str:
    """What a file that is not a regular one is, for the message."""
    kinds = [(stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
             (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")]  # fmt: skip
    return next((what for test, what in kinds if test(mode)), "not a plain file")
