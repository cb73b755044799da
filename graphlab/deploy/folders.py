"""The output folder of an export: refusing what it must not replace, writing beside it, renaming into place.

:func:`check_target` refuses an existing target unless ``overwrite`` and gl.export wrote all of it
(:func:`check_replaceable`); :func:`temporary_folder` makes the hidden folder the export is written
into, :func:`move_into_place` renames it to the target (an old one set aside, checked again and
deleted after), and :func:`remove_stale_folders` deletes what killed exports left, only folders of
gl.export's own naming made on this machine by a process that is gone.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

from graphlab.child.process import ChildRunError
from graphlab.core.fileio import write_fix
from graphlab.core.leftovers import host_tag, process_alive
from graphlab.core.names import shown
from graphlab.deploy.errors import ExportError, ManifestError, OutputPathError
from graphlab.deploy.seal import listed_files, walk_files

__all__ = [
    "HOST_FILES",
    "check_replaceable",
    "check_target",
    "disk_error",
    "host_tag",
    "make_parents",
    "move_into_place",
    "output_folder",
    "remove_made",
    "remove_stale_folders",
    "temporary_folder",
]


#: The hidden folders gl.export makes next to a target: ``export`` while writing it, ``old`` for the
#: folder it replaces until that is deleted. Nothing else is ever deleted as stale.
_OWN_FOLDER = re.compile(
    r"\.(?P<name>.+)\.(?P<kind>export|old)-(?P<host>[A-Za-z0-9]+)-(?P<pid>[1-9][0-9]{0,9})-[a-z0-9_]{8}"
)
#: What gl.export writes besides manifest.json and the files it lists: the generated C host.
HOST_FILES = ("main.c", "npy.c", "npy.h", "CMakeLists.txt", "README.md")
#: The runtime library's sources every export carries in ``runtime/`` (graphlab.deploy.embedgen copies these).
RUNTIME_FILES = (
    "CMakeLists.txt", "gl_capture.c", "gl_internal.h", "gl_json.c", "gl_json.h", "gl_manifest.c", "gl_sha256.c",
    "gl_sha256.h", "graphlab_runtime.c", "graphlab_runtime.h", "graphlab_runtime.hpp",
)  # fmt: skip
_KEEP_OUT = "nothing was deleted: remove it yourself or choose another path"


def _own_prefix(target: Path, kind: str) -> str:
    """The start of the name of a hidden folder for ``target``: ``.<name>.<kind>-<host>-<pid>-``."""
    return f".{target.name}.{kind}-{host_tag()}-{os.getpid()}-"


def output_folder(path: object) -> Path:
    """``path`` as an absolute Path, or an error saying why it cannot name a folder, before anything is written.

    A NUL, a character UTF-8 cannot encode (an undecodable byte of a file name: the path goes into
    JSON for the compiling child) or an unknown ``~user`` would otherwise fail later as a raw
    ValueError, ChildRunError or RuntimeError. ``..`` is resolved by name, so ``a/../b`` is ``b``.
    """
    text = os.fspath(path) if isinstance(path, (str, os.PathLike)) else None
    if not isinstance(text, str):
        raise ExportError(f"path={shown(path)}: give the output folder as a str or pathlib.Path")
    problem = None
    if not text:
        problem = "it is empty"
    elif "\0" in text:
        problem = f"it holds a NUL character at index {text.index(chr(0))}"
    else:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            problem = f"character {text[exc.start]!r} at index {exc.start} is not valid Unicode"
    if problem is not None:
        raise OutputPathError(
            f"output path {shown(text)} cannot name a folder ({problem}); choose another path", path=Path(text)
        )
    try:  # '..' is resolved by name (as os.path.normpath does): "a/../b" must not leave an empty "a" behind
        return Path(os.path.normpath(Path(text).expanduser().absolute()))
    except (RuntimeError, OSError) as exc:  # "~nobody/x"; a working folder that was deleted
        raise OutputPathError(
            f"output path {shown(text)}: {exc}; write the folder's path out in full", path=Path(text)
        ) from exc


def check_target(target: Path, overwrite: bool) -> None:
    """Refuse an existing target (unless ``overwrite`` and gl.export wrote it) or a path the system refuses.

    Nothing is created here: the missing parent folders are made by :func:`make_parents` only once
    every other input was checked, so a refused export leaves no empty folders behind.
    """
    try:
        is_link, exists = target.is_symlink(), target.exists()
    except OSError as exc:  # a name or path too long for the file system
        raise OutputPathError(
            f"cannot use {shown(str(target))} as an output folder: {exc.strerror or exc}; choose another path",
            path=target,
        ) from exc
    if is_link:
        raise _link_error(target)
    if exists:
        if not overwrite:
            raise OutputPathError(
                f"{target} already exists; pass overwrite=True (--overwrite on the command line) to replace "
                "it, or choose another path",
                path=target,
            )
        check_replaceable(target, target)


def make_parents(target: Path) -> list[Path]:
    """Create the target's missing parent folders; return those made, outermost first (see :func:`remove_made`)."""
    made = [folder for folder in reversed(target.parents) if not folder.exists()]
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        remove_made(made)
        raise OutputPathError(
            f"cannot create the folder {target.parent} for {target}: {exc.strerror or exc}; choose a writable location",
            path=target,
        ) from exc
    return made


def remove_made(folders: list[Path]) -> None:
    """Remove the folders :func:`make_parents` made, innermost first, each only while it is empty."""
    for folder in reversed(folders):
        with contextlib.suppress(OSError):
            folder.rmdir()


def _link_error(target: Path) -> OutputPathError:
    return OutputPathError(
        f"{target} is a symbolic link (to {target.readlink()}); gl.export neither writes through a link nor "
        "replaces one, even with overwrite=True; pass the folder it points to, or remove the link; nothing was deleted",
        path=target,
    )


def _written_by_export(name: str, listed: set[str], headers: frozenset[str] | set[str] = frozenset()) -> bool:
    """Whether a path in an export folder is one gl.export writes (or the host build puts there)."""
    if name == "manifest.json" or name in listed or name in headers:
        return True
    runtime = name.removeprefix("runtime/")
    if runtime != name:
        temporary = {f".{n}.tmp" for n in RUNTIME_FILES}
        return runtime in RUNTIME_FILES or runtime.startswith("build/") or runtime in temporary
    host = name.removeprefix("host/")
    if host == name:
        return False
    return host in HOST_FILES or host.startswith("build/") or host in {f".{n}.tmp" for n in HOST_FILES}


def _graph_headers(folder: Path) -> set[str]:
    """``include/<graph>.h`` (and its temporary name) for each graph of the folder's manifest."""
    try:
        graphs = json.loads((folder / "manifest.json").read_text(encoding="utf-8")).get("graphs", [])
        names = [g["name"] for g in graphs if isinstance(g, dict) and isinstance(g.get("name"), str)]
    except (OSError, ValueError, AttributeError):
        return set()
    return {f"include/{n}.h" for n in names} | {f"include/.{n}.h.tmp" for n in names}


def check_replaceable(folder: Path, target: Path) -> None:
    """Refuse to delete ``folder`` (the target, or the target renamed aside) unless gl.export wrote all of it.

    An empty folder holds nothing to lose. Otherwise ``manifest.json`` must be a graphlab module's
    (format ``graphlab.module/1``) and every file and link in the folder must be the manifest, a file
    it lists, or part of the generated ``host/``: a user's own file in an export is never deleted.
    """
    if folder.is_symlink():
        raise _link_error(target)
    if not folder.is_dir():
        raise OutputPathError(
            f"{target} is a file, not a folder gl.export wrote, so overwrite=True does not replace it; {_KEEP_OUT}",
            path=target,
        )
    if not any(folder.iterdir()):
        return
    try:
        listed = listed_files(folder)
    except ManifestError as exc:
        why = f"manifest.json {exc.json_path}: {exc.reason}"
        if not (folder / "manifest.json").is_file():
            why = "it has no manifest.json"
        raise OutputPathError(
            f"{target} is not a folder gl.export wrote ({why}), so overwrite=True does not replace it; {_KEEP_OUT}",
            path=target,
        ) from exc
    headers = _graph_headers(folder)
    extra = [name for name in walk_files(folder) if not _written_by_export(name, listed, headers)]
    if extra:
        shown = ", ".join(extra[:3]) + (f" and {len(extra) - 3} more" if len(extra) > 3 else "")
        raise OutputPathError(
            f"{target} is an export but also holds files gl.export did not write ({shown}), so overwrite=True "
            f"does not replace it; move them out of it and export again, or choose another path; nothing was deleted",
            path=target,
        )


def remove_stale_folders(parent: Path) -> list[Path]:
    """Delete the hidden folders interrupted exports left in ``parent``; return what was deleted.

    Only folders named as gl.export names its own (``.<name>.export-<host>-<pid>-<random>``), made on
    this machine (``host``) by a process that no longer exists. A replaced export set aside
    (``.<name>.old-...``) goes only where its replacement ``<name>`` is in place: if the process
    died between the two renames it is the only copy, so it stays.
    """
    removed: list[Path] = []
    try:
        entries = list(parent.iterdir())
    except OSError:
        return removed
    host = host_tag()
    for entry in entries:
        match = _OWN_FOLDER.fullmatch(entry.name)
        if match is None or match["host"] != host or process_alive(int(match["pid"])):
            continue
        if entry.is_symlink() or not entry.is_dir():
            continue
        if match["kind"] == "old" and not (parent / match["name"]).is_dir():
            continue
        shutil.rmtree(entry, ignore_errors=True)
        removed.append(entry)
    return removed


def temporary_folder(target: Path) -> Path:
    try:
        return Path(tempfile.mkdtemp(prefix=_own_prefix(target, "export"), dir=target.parent))
    except OSError as exc:
        raise OutputPathError(
            f"cannot write into {target.parent}: {exc.strerror or exc}; choose a writable location", path=target
        ) from exc


@contextlib.contextmanager
def _parent_locked(target: Path) -> Iterator[None]:
    """Hold an exclusive lock on the target's parent folder, so two exports into one path take turns.

    Two ``overwrite=True`` exports finishing at once would otherwise both rename the old folder
    aside, and the second would fail with a raw FileNotFoundError. The lock is the kernel's
    (``flock`` on the folder itself): it goes with the process, so a killed export holds nothing.
    """
    try:
        fd = os.open(target.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:  # no lock to be had (a folder that cannot be opened): renaming still refuses a clash
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def move_into_place(tmp: Path, target: Path, overwrite: bool) -> None:
    """Rename ``tmp`` to ``target``; an old target is renamed aside, checked again, and deleted after.

    The old folder may have changed while the export ran (or appeared: then only ``overwrite``
    replaces it); checked where it was renamed to, nothing can slip in between the check and the
    delete. Refused, it is renamed back. Exports into the same parent folder take turns here, so
    of two ``overwrite=True`` exports into one path the later one replaces the earlier.
    """
    with _parent_locked(target):
        _move_into_place(tmp, target, overwrite)


def _move_into_place(tmp: Path, target: Path, overwrite: bool) -> None:
    if target.is_symlink():
        raise _link_error(target)
    if not target.exists():
        tmp.rename(target)
        return
    if not overwrite:
        raise OutputPathError(
            f"{target} appeared while the export ran; pass overwrite=True to replace it (only a folder gl.export "
            "wrote is replaced), or choose another path; nothing was deleted",
            path=target,
        )
    old = target.with_name(_own_prefix(target, "old") + uuid.uuid4().hex[:8])
    target.rename(old)
    try:
        check_replaceable(old, target)
        tmp.rename(target)
    except BaseException:
        old.rename(target)
        raise
    shutil.rmtree(old, ignore_errors=True)


#: Exception type names a child reports for a failed file operation (it raises, the parent reads the name).
_CHILD_OS_ERRORS = {"OSError", "PermissionError", "FileNotFoundError", "NotADirectoryError", "IsADirectoryError"}


def disk_error(exc: BaseException, target: Path) -> OutputPathError | None:
    """The OutputPathError for a write of the export that failed (a full disk, a read-only file system...),
    in this process or in the compiling child; None for any other failure.

    It names the target and the fix; what was written so far is deleted by the caller, so nothing is
    left at the target, and an old folder there is unchanged.
    """
    if isinstance(exc, OutputPathError):
        return None
    if isinstance(exc, OSError) and exc.errno is not None:
        code, reason = exc.errno, exc.strerror or os.strerror(exc.errno)
    elif isinstance(exc, ChildRunError) and exc.child_type in _CHILD_OS_ERRORS:
        found = re.search(r"\[Errno (\d+)\] ([^:\n]+)", str(exc))
        if found is None:
            return None
        code, reason = int(found[1]), found[2]
    else:
        return None
    error = OutputPathError(
        f"cannot write the export {target} (in {target.parent}): {reason}; {write_fix(code)}; "
        f"nothing was left at {target} and an existing folder there is unchanged",
        path=target,
    )
    error.errno = code
    return error
