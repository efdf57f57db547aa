"""A trial, tested through hyperspool.testing (tests/test_testing.py): it charges a card (a step
the cases stub: ./charge-card is not there), sleeps out two weeks, then waits a week for an upgrade."""

from datetime import timedelta

from hyperspool import script

receipt = script.step("charge", ["./charge-card", "--amount", "0"])
script.sleep(timedelta(days=14))
plan = script.wait_signal("upgrade", timeout=timedelta(days=7))
script.output_set("receipt", receipt.strip())
script.output_set("plan", plan if plan is not None else "free")
