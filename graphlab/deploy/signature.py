"""A module folder's signature: an HMAC of its manifest keyed by a secret of this user's, kept outside the folder.

The sha256 seal (:mod:`graphlab.deploy.seal`) shows that a module's files match its
``manifest.json``; but whoever can edit a ``.ll`` or ``.spv`` can also write its new hash into the
manifest, and ``gl.load_module``, ``dbg.compare(folder)`` and ``gl.verify`` then run the edited
code in the notebook's process. So ``gl.export`` also signs the manifest (which lists every file's
hash) with HMAC-SHA256 under a key kept in ``~/.config/graphlab/seal.key`` (``$XDG_CONFIG_HOME``
if set; made on first export, readable by this user only), recorded as ``$.signature``
(``{"key": <key id>, "hmac": <hex>}``). Before a folder is used:

- signed with this user's key and matching: nothing to say;
- signed with this user's key but not matching: refused (:class:`ManifestError`): it changed since
  this user exported it;
- not signed, or signed with another key (another user, another machine): an
  :class:`UnsealedModuleWarning` saying that only its own manifest vouches for it, so it should be
  loaded only when trusted, or exported again.

The key never leaves this user's config folder and is not in the module folder: copying a module
copies no secret.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import sys
import warnings
from collections.abc import Mapping
from pathlib import Path
from types import FrameType
from typing import Any

from graphlab.deploy.errors import ManifestError, UnsealedModuleWarning

__all__ = ["check_signature", "key_file", "sign"]

_KEY_BYTES = 32


def key_file() -> Path:
    """Where this user's signing key lives: ``$XDG_CONFIG_HOME/graphlab/seal.key``, else under ``~/.config``."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path("~/.config").expanduser())
    return Path(base) / "graphlab" / "seal.key"


def _read_key(file: Path) -> bytes | None:
    try:
        text = file.read_text(encoding="ascii").strip()
        key = bytes.fromhex(text)
    except (OSError, ValueError):
        return None
    return key if len(key) == _KEY_BYTES else None


def _user_key(*, create: bool) -> bytes | None:
    """This user's key; made (0600, in a 0700 folder) when ``create`` and there is none. None when it cannot be had."""
    file = key_file()
    key = _read_key(file)
    if key is not None or not create:
        return key
    try:
        file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it meanwhile
        return _read_key(file)
    except OSError:  # a read-only home: exports go unsigned, and loading them says so
        return None
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(secrets.token_hex(_KEY_BYTES) + "\n")
    return _read_key(file)


def _key_id(key: bytes) -> str:
    return hashlib.sha256(b"graphlab seal key id\0" + key).hexdigest()[:16]


def _body(data: Mapping[str, Any]) -> bytes:
    """The manifest as signed: every field but the signature, in one canonical JSON form."""
    rest = {k: v for k, v in data.items() if k != "signature"}
    return json.dumps(rest, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def sign(data: Mapping[str, Any]) -> dict[str, str] | None:
    """``$.signature`` for manifest ``data``, with this user's key (made on first use); None where no key can be had."""
    key = _user_key(create=True)
    if key is None:
        return None
    return {"key": _key_id(key), "hmac": hmac.new(key, _body(data), hashlib.sha256).hexdigest()}


def check_signature(folder: Path, data: Mapping[str, Any]) -> None:
    """Refuse a folder this user signed that changed since; warn about one this user did not sign."""
    file = str(folder / "manifest.json")
    signature = data.get("signature")
    key = _user_key(create=False)
    if isinstance(signature, dict) and key is not None and signature.get("key") == _key_id(key):
        expected = hmac.new(key, _body(data), hashlib.sha256).hexdigest()
        if not hmac.compare_digest(str(signature.get("hmac")), expected):
            raise ManifestError(
                "does not match this user's signature: manifest.json (or a hash in it, so a file it lists) "
                "changed since you exported it; export the module again rather than run what changed",
                file=file,
                json_path="$.signature",
            )
        return
    why = "it has no signature" if not isinstance(signature, dict) else "it was signed with another user's key"
    warnings.warn(
        f"{folder} was not exported by this user ({why}; the key is {key_file()}): its sha256 seal only shows "
        "that its files match its own manifest.json, which whoever edits the module can rewrite, and loading "
        "it runs its code in this process. Use it only if you trust where it came from, or export it again.",
        UnsealedModuleWarning,
        stacklevel=_caller_level(),
    )


def _caller_level() -> int:
    """The ``stacklevel`` of the first frame outside graphlab: the user's call that loads the folder."""
    package = str(Path(__file__).resolve().parents[1])
    frame: FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(package):
        frame, level = frame.f_back, level + 1
    return level
