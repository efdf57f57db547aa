"""Scripts the engine tests run with `spool run`, one per promise of docs/sdks.md."""

RAISES = """
from hyperspool import script

class CardDeclined(Exception):
    pass

def charge():
    print("charging", flush=True)
    raise CardDeclined("card declined")

try:
    script.step_fn("charge", charge)
except CardDeclined as error:
    print(f"caught {type(error).__name__}: {error}", flush=True)
    raise
"""

NOT_JSON = """
import datetime
from hyperspool import script
from hyperspool.errors import ScriptError

try:
    script.step_fn("when", lambda: {"at": datetime.date(2030, 1, 1)})
except ScriptError as error:
    print(f"refused: {error.kind}: {error.message}", flush=True)
    raise
"""

BLANKET_EXCEPT = """
import os
from hyperspool import script
from hyperspool.errors import ScriptError

print(f"pass {os.environ['SPOOL_PASS']} starts", flush=True)
try:
    script.sleep(1)
except ScriptError:
    print("swallowed the wait", flush=True)
print(f"past the wait in pass {os.environ['SPOOL_PASS']}", flush=True)
"""

SECOND_LOCK = """
from hyperspool import script
from hyperspool.errors import ScriptError

with script.lock("deploy"):
    print("holding deploy", flush=True)
try:
    with script.lock("deploy"):
        print("the second body ran", flush=True)
except ScriptError as error:
    print(f"refused: {error.kind}: {error.message}", flush=True)
"""

TIMEOUT = """
from hyperspool import script

print(f"payload: {script.wait_signal('approve', timeout=1)!r}", flush=True)
"""

ONCE = """
import os
from hyperspool import script

def deploy():
    print(f"deploying in pass {os.environ['SPOOL_PASS']}", flush=True)
    return {"url": "https://pr-7.preview", "pass": int(os.environ["SPOOL_PASS"])}

env = script.step_fn("deploy", deploy)
script.sleep(1)
print(f"pass {os.environ['SPOOL_PASS']} has the value from pass {env['pass']}: {env['url']}", flush=True)
"""

ARTIFACTS = """
import hashlib, os
from hyperspool import script
from hyperspool.errors import ScriptError

if os.environ["SPOOL_PASS"] == "1":
    with open("model.bin", "wb") as out:
        out.write(os.urandom(1_300_000))
else:
    # A new pod has none of the last pass's files: the replayed put must not look for it.
    os.remove("model.bin")
want = script.step_fn("sha", lambda: hashlib.sha256(open("model.bin", "rb").read()).hexdigest())
script.artifact_put("models/model.bin", "model.bin")
script.sleep(1)
path = script.artifact_get("models/model.bin", "got.bin")
got = hashlib.sha256(open(path, "rb").read()).hexdigest()
print(f"pass {os.environ['SPOOL_PASS']}: sha256 {'matches' if got == want else 'differs'}", flush=True)
print("listed:", [(a["name"], a["size"]) for a in script.artifact_list()], flush=True)
try:
    script.artifact_get("nope")
except ScriptError as error:
    print(f"refused: {error.kind}: {error.message}", flush=True)
"""

ALL = {
    "raises": RAISES,
    "not_json": NOT_JSON,
    "blanket_except": BLANKET_EXCEPT,
    "second_lock": SECOND_LOCK,
    "timeout": TIMEOUT,
    "once": ONCE,
    "artifacts": ARTIFACTS,
}
