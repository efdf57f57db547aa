#!/usr/bin/env bash
# The Rust SDK's checks, as .ci/run calls them: clippy with warnings as errors, then every test
# (the shared protocol vectors, and the preview example against `spool dev`, which needs node and
# `npm run build` in the repository root, else it says it skipped).
set -euo pipefail
cd "$(dirname "$0")"
cargo clippy --all-targets --locked -- -D warnings
cargo test --locked
