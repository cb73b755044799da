"""The seal of an exported module: the sha256 of every file it ships, checked before anything is used.

``gl.export`` records :func:`file_digests` in ``manifest.json``'s ``files``; :func:`check_files`
refuses a folder whose listed files changed or went missing, or whose ``module/`` holds a file the
manifest does not list, and :func:`check_listed` returns a listed file's bytes only once they
match. :func:`listed_files` and :func:`walk_files` let ``overwrite=True`` tell an export from any
other folder. The manifest's format and reader are in :mod:`graphlab.deploy.manifest`.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Collection, Iterable, Iterator
from pathlib import Path
from typing import Any

from graphlab.core.fileio import read_limited
from graphlab.deploy.errors import ManifestError
from graphlab.deploy.manifest import MANIFEST_FORMAT, Manifest, load_manifest_json, manifest_error, path_problem
from graphlab.deploy.module_meta import check_against_module
from graphlab.deploy.signature import check_signature

__all__ = [
    "SEALED_FOLDERS",
    "check_contract",
    "check_files",
    "check_listed",
    "file_digests",
    "listed_files",
    "walk_files",
]

#: Folders whose every file must be listed in ``files`` (what ti_load_aot_module reads).
SEALED_FOLDERS = ("module",)

#: The most bytes one listed module file may hold (an ``.ll`` of a large graph is a few MB).
MAX_MODULE_FILE_BYTES = 1 << 30


def listed_files(folder: Path) -> set[str]:
    """The paths ``folder/manifest.json`` lists under ``files``, checking only that it is a graphlab module's.

    For ``gl.export(overwrite=True)``, which must tell a module folder from any folder holding a
    ``manifest.json``; a ManifestError says why this one is not.
    """
    file = str(folder / "manifest.json")
    data = load_manifest_json(folder, fix="")
    if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT:
        got = data.get("format") if isinstance(data, dict) else data
        message = f"the format is {str(got)[:60]!r}, not a graphlab module's {MANIFEST_FORMAT!r}"
        raise ManifestError(message, file=file, json_path="$.format")
    files = data.get("files")
    if not isinstance(files, dict):
        raise ManifestError("it lists no files", file=file, json_path="$.files")
    return {name for name in files if isinstance(name, str)}


def walk_files(folder: Path, under: str = "") -> Iterator[str]:
    """POSIX paths (relative to ``folder``) of every file and link below ``folder/under``, links not followed."""
    for top, dirs, names in os.walk(folder / under):
        links = [d for d in dirs if Path(top, d).is_symlink()]
        for name in sorted([*names, *links]):
            yield Path(top, name).relative_to(folder).as_posix()


def check_listed(manifest: Manifest, name: str, json_path: str | None = None) -> bytes:
    """The content of listed file ``name``, refused unless it is still the file the export hashed.

    ``json_path`` names where the manifest refers to it (``$.source.kernels``), for one it must list.
    The bytes returned are the bytes hashed, so what is used is what was checked.
    """
    folder = manifest.folder
    digest = manifest.files.get(name)
    if digest is None:
        where = json_path or f"$.files[{name!r}]"
        raise manifest_error(folder, where, f"{name!r} is not listed in $.files, so its integrity cannot be checked")
    where = f"$.files[{name!r}]"
    problem = path_problem(folder, name)  # again: links may have changed since reading
    if problem is not None:
        raise manifest_error(folder, where, problem)
    path = folder / name
    try:
        content = read_limited(path, limit=MAX_MODULE_FILE_BYTES)
    except FileNotFoundError as exc:
        raise manifest_error(folder, where, f"{path} is missing since export") from exc
    except OSError as exc:  # a FIFO, a device or a folder swapped in: refused before a read that never ends
        raise manifest_error(folder, where, f"{path} is not the file the export wrote: {exc.strerror}") from exc
    if hashlib.sha256(content).hexdigest() != digest:
        raise manifest_error(folder, where, f"{path} is changed since export (its sha256 differs)")
    return content


def check_files(manifest: Manifest, *, missing_ok: Collection[str] = ()) -> None:
    """Refuse a folder that is not what the export sealed, before anything of it is loaded or run.

    ``files`` must list something; every file under ``module/`` (all of which ti_load_aot_module
    may read) must be listed; the sources and the ``.tcm`` the manifest names must be listed; and
    every listed file must be there with its sha256. ``missing_ok`` names listed files that may be
    absent (``gl.verify`` with ``kernels=`` does not need the stored kernels). Then the manifest
    itself: its signature (refused if this user signed it and it changed, warned about if not
    signed by this user: :mod:`~graphlab.deploy.signature`), its graphs against the sealed copy
    (:func:`check_contract`) and against the module's own graph table
    (:mod:`~graphlab.deploy.module_meta`).
    """
    folder = manifest.folder
    if not manifest.files:
        raise manifest_error(
            folder, "$.files", "lists no files with their sha256, so the module's integrity cannot be checked"
        )
    for under in SEALED_FOLDERS:
        unlisted = [name for name in walk_files(folder, under) if name not in manifest.files]
        if unlisted:
            more = f" (and {len(unlisted) - 1} more)" if len(unlisted) > 1 else ""
            message = f"{folder / unlisted[0]}{more} is not listed, so its integrity cannot be checked"
            raise manifest_error(folder, "$.files", message)
    source = manifest.source or {}
    named = [(f"$.source.graphs[{g!r}]", rel) for g, rel in source.get("graphs", {}).items()]
    named += [(f"$.source.{key}", source[key]) for key in ("kernels", "contract") if source.get(key)]
    named += [("$.tcm", manifest.tcm)] if manifest.tcm else []
    for where, name in named:
        if name not in manifest.files:
            raise manifest_error(
                folder, where, f"{name!r} is not listed in $.files, so its integrity cannot be checked"
            )
    for name in manifest.files:
        path = folder / name
        if name in missing_ok and not (path.exists() or path.is_symlink()):
            continue
        check_listed(manifest, name)
    check_signature(folder, manifest.data)
    check_contract(manifest)
    check_against_module(manifest)


def _first_difference(have: Any, want: Any, path: str) -> str | None:
    """The JSON path of the first place ``have`` differs from ``want``, or None when they are equal."""
    if isinstance(have, dict) and isinstance(want, dict):
        for key in sorted({*have, *want}, key=str):
            found = _first_difference(have.get(key), want.get(key), f"{path}.{key}")
            if found is not None:
                return found
        return None
    if isinstance(have, list) and isinstance(want, list) and len(have) == len(want):
        for i, (a, b) in enumerate(zip(have, want)):
            found = _first_difference(a, b, f"{path}[{i}]")
            if found is not None:
                return found
        return None
    return None if have == want else path


def check_contract(manifest: Manifest) -> None:
    """Refuse a manifest whose graphs or dims differ from the sealed copy gl.export wrote beside them.

    ``manifest.json`` is not hashed (it holds the hashes); ``source/contract.json`` is, and holds
    what the C runtime binding trusts: each graph's args (kinds, dtypes, shapes and their dim
    names), its shape relations (the guard against buffers too short for the kernels' loops), its
    control tree, and the default dims. An edit to those in the manifest alone is refused here.
    """
    if manifest.source is None:
        return  # no sources: a hand-made manifest (gl.verify refuses it); the module's own table still checks it
    rel = manifest.source.get("contract")
    if not rel:
        raise manifest_error(
            manifest.folder,
            "$.source.contract",
            "is missing, but gl.export writes a sealed copy of the graphs there (source/contract.json): this "
            "manifest was edited, or comes from an older graphlab",
        )
    content = check_listed(manifest, rel, "$.source.contract")
    try:
        contract = json.loads(content)
    except ValueError as exc:
        raise manifest_error(manifest.folder, "$.source.contract", f"{rel} is not JSON ({exc})") from exc
    for key in ("graphs", "dims"):
        where = _first_difference(
            manifest.data.get(key), contract.get(key) if isinstance(contract, dict) else None, f"$.{key}"
        )
        if where is not None:
            raise manifest_error(
                manifest.folder,
                where,
                f"differs from the sealed copy in {rel} that gl.export wrote: manifest.json was edited after export, "
                "and running it could misread buffers or skip the checks that keep kernels inside them",
            )


def file_digests(folder: Path, names: Iterable[str]) -> dict[str, str]:
    """sha256 of every file under the given entries of ``folder`` (files or folders), by POSIX path.

    The C runtime binding refuses a module whose listed files changed after export.
    """
    digests: dict[str, str] = {}
    for name in names:
        root = folder / name
        paths = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else [root]
        for path in paths:
            digests[path.relative_to(folder).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return digests
