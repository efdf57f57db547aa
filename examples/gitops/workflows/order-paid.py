# Runs once per order.paid event (the Handler in triggers.yaml); the event is the run's input.
import json
import os
import subprocess


def spool(*args: str) -> str:
    return subprocess.run(["spool", *args], check=True, capture_output=True, text=True).stdout.strip()


with open(os.environ["SPOOL_INPUT_FILE"]) as f:
    order = json.load(f)["payload"]["order"]
spool("step", "reserve", "--", "echo", f"reserved stock for order {order}")
spool("step", "ship", "--", "echo", f"shipped order {order}")
