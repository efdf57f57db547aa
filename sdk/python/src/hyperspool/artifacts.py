"""Artifacts: files a run keeps between passes and pods (docs/artifacts.md).

Bytes move in parts of 512 KiB, each one request on the spool socket, so neither this process nor
the agent holds a whole artifact.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import stat
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
