"""A preview environment: deploy it, wait for the PR to close (holding no agent), then tear it down.

    spool submit examples/preview.py --follow
    spool event emit pr.closed --payload '{"pr": 7}'    # from another terminal
"""

from hyperspool import script


def deploy(host):
    print(f"deploying a preview to {host}", flush=True)
    return {"host": host, "url": f"https://{host}"}


def teardown(env):
    print(f"tearing down {env['url']}", flush=True)


host = "pr-7.preview.example"

env = script.step_fn("deploy", lambda: deploy(host))
script.wait_event("pr.closed")
script.step_fn("teardown", lambda: teardown(env))
