#!/usr/bin/env bash
# Builds, waits for a person to approve, then deploys. Each spool call is a checkpoint: a pass that
# dies replays the ones already done instantly and carries on from the first that is not.
version="$(spool step build -- sh -c 'date +%Y%m%d.%H%M%S')"
spool step test -- echo "tests of $version passed"
spool wait signal approve --timeout 2d
spool step deploy -- echo "deploying $version"
