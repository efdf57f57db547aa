"""Artifacts: files a run keeps between passes and pods (docs/artifacts.md).

Bytes move in parts of 512 KiB, each one request on the spool socket, so neither this process nor
the agent holds a whole artifact.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import stat
import tarfile
from typing import Any

from .answers import ok
from .connection import Message, connection
from .errors import ScriptError

PART_BYTES = 512 * 1024


def artifact_put(name: str, path: str | os.PathLike[str], content_type: str | None = None) -> None:
    """Stores the file at ``path`` as this run's artifact ``name``. Recorded: on a replay the agent
    answers from the journal and the file is not opened (a new pod has none of the last pass's
    files); a new put whose file cannot be read is refused by the agent, taking no position."""
    request: Message = {"verb": "artifact.put", "name": name}
    if content_type:
        request["contentType"] = content_type
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            request["unreadable"] = f"artifact_put {name}: {os.fspath(path)} is not a file"
        else:
            request["size"] = info.st_size
    except OSError as error:
        request["unreadable"] = f"artifact_put {name}: cannot read {os.fspath(path)}: {error.strerror}"
    answer = connection().request(request)
    if answer.get("status") != "execute":
        ok(answer)
        return
    position = answer.get("position")
    digest = hashlib.sha256()
    sent = 0
    with open(path, "rb") as source:
        while part := source.read(PART_BYTES):
            ok(connection().request({"verb": "artifact.write", "position": position, "data": base64.b64encode(part).decode("ascii")}))
            digest.update(part)
            sent += len(part)
    ok(connection().request({"verb": "artifact.commit", "position": position, "size": sent, "sha256": digest.hexdigest()}))


def artifact_get(name: str, dest: str | os.PathLike[str] | None = None, run: str | None = None) -> str:
    """Writes the artifact ``name`` (of this run, or of ``run`` in the same project) to ``dest``
    (default: the last part of the name, in the working directory) and returns that path. The file
    appears only once whole and its sha256 checked."""
    if dest is None:
        parts = [part for part in name.split("/") if part not in ("", ".", "..")]
        if not parts:
            raise ScriptError("usage", f"artifact_get: '{name}' names no file to write to; give a dest", 2)
        target = parts[-1]
    else:
        target = os.fspath(dest)
    request: Message = {"verb": "artifact.get", "name": name, "part": 0}
    if run is not None:
        request["run"] = run
    partial = f"{target}.spool-partial"
    digest = hashlib.sha256()
    size = 0
    try:
        with open(partial, "wb") as out:
            part_no = 0
            while True:
                value: dict[str, Any] = ok(connection().request({**request, "part": part_no}))["value"]
                data = base64.b64decode(str(value["data"]))
                out.write(data)
                digest.update(data)
                size += len(data)
                part_no += 1
                if part_no >= int(value["parts"]):
                    break
        if size != int(value["size"]) or digest.hexdigest() != value["sha256"]:
            raise ScriptError("internal", f"artifact_get: '{name}' arrived as {size} bytes, not the {value['size']} bytes it was stored as", 1)
        os.replace(partial, target)
    finally:
        if os.path.exists(partial):
            os.remove(partial)
    return target


def artifact_list(run: str | None = None) -> list[dict[str, Any]]:
    """This run's artifacts (or ``run``'s): name, size, sha256, contentType, createdAt."""
    request: Message = {"verb": "artifact.list"}
    if run is not None:
        request["run"] = run
    request["json"] = True
    listed: list[dict[str, Any]] = json.loads(str(ok(connection().request(request)).get("stdout", "[]")))
    return listed


CHECKOUT_ARTIFACT = "spool/checkout.tar"


class _ArtifactStream(io.RawIOBase):
    """An artifact's parts as a file to read once, front to back, checking size and sha256 at its end."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._part = 0
        self._parts = 1
        self._buffer = b""
        self._digest = hashlib.sha256()
        self._size = 0
        self._value: dict[str, Any] = {}

    def readable(self) -> bool:
        return True

    def readinto(self, into: Any) -> int:
        while not self._buffer and self._part < self._parts:
            self._value = ok(connection().request({"verb": "artifact.get", "name": self._name, "part": self._part}))["value"]
            self._parts = int(self._value["parts"])
            self._part += 1
            self._buffer = base64.b64decode(str(self._value["data"]))
            self._digest.update(self._buffer)
            self._size += len(self._buffer)
            if self._part >= self._parts and (self._size != int(self._value["size"]) or self._digest.hexdigest() != self._value["sha256"]):
                raise ScriptError("internal", f"checkout: the bundle arrived as {self._size} bytes, not the {self._value['size']} bytes it was stored as", 1)
        count = min(len(into), len(self._buffer))
        into[:count] = self._buffer[:count]
        self._buffer = self._buffer[count:]
        return count


def checkout(dest: str | os.PathLike[str] = ".") -> int:
    """Unpacks the run's bundle (the files ``spool run FILE --with DIR`` or ``spool submit --with``
    bundled with it, or a Workflow's ``checkoutFrom``) into ``dest`` and returns how many files it
    wrote, as ``spool checkout [DEST]`` does: files already there are overwritten, and every pass
    (every pod) gets the same files. Not recorded: call it on every pass that needs the files. A run
    with no bundle raises ``ScriptError`` (usage)."""
    target = os.fspath(dest)
    files = 0
    try:
        with tarfile.open(fileobj=io.BufferedReader(_ArtifactStream(CHECKOUT_ARTIFACT)), mode="r|") as archive:
            os.makedirs(target, exist_ok=True)
            for member in archive:
                parts = member.name.split("/")
                if member.name.startswith("/") or ".." in parts:
                    raise ScriptError("internal", f"checkout: cannot unpack into {target}: the bundle holds a path outside the checkout: {member.name}", 1)
                path = os.path.join(target, *[part for part in parts if part])
                if member.isdir():
                    os.makedirs(path, exist_ok=True)
                    continue
                if not member.isfile():
                    raise ScriptError("internal", f"checkout: cannot unpack into {target}: the bundle holds {member.name}, which is not a file or a directory", 1)
                os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
                if os.path.lexists(path):
                    os.remove(path)
                source = archive.extractfile(member)
                assert source is not None
                with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o755 if member.mode & 0o111 else 0o644), "wb") as out:
                    while chunk := source.read(PART_BYTES):
                        out.write(chunk)
                files += 1
    except tarfile.TarError as error:
        raise ScriptError("internal", f"checkout: the bundle is cut short or damaged ({error}); {files} files were unpacked into {target}", 1) from None
    return files
