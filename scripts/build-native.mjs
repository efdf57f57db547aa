#!/usr/bin/env node
/**
 * Builds the native in-script client (sdk/go/cmd/spool, a static Go binary) into
 * dist/native/<platform>-<arch>/spool, where `spool run`, `spool dev` and the runner image find it,
 * and beside it an activity attempt's reporter (sdk/go/cmd/spool-activity-attempt), for the image.
 *
 *   node scripts/build-native.mjs            # this platform; says once what it did
 *   node scripts/build-native.mjs --all      # linux and darwin, x64 and arm64 (what a release ships)
 *   node scripts/build-native.mjs --if-go    # as the install step runs it: without Go, say so and exit 0
 *
 * Never fails an install for want of Go: scripts then get the Node client, which does the same
 * things a Node start-up slower per call.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const MODULE = join(ROOT, 'sdk', 'go');
const args = process.argv.slice(2);
const all = args.includes('--all');
const ifGo = args.includes('--if-go');

/** Node's names (what the optional packages and dist/native/ use) and Go's for the same target. */
const TARGETS = [
  { node: 'linux-x64', goos: 'linux', goarch: 'amd64' },
  { node: 'linux-arm64', goos: 'linux', goarch: 'arm64' },
  { node: 'darwin-x64', goos: 'darwin', goarch: 'amd64' },
  { node: 'darwin-arm64', goos: 'darwin', goarch: 'arm64' },
];

const say = (line) => process.stderr.write(`spool: ${line}\n`);

function goVersion() {
  try {
    return execFileSync('go', ['version'], { encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
}

const go = goVersion();
if (!go || !existsSync(join(MODULE, 'go.mod'))) {
  const why = go ? `${MODULE} is not here` : 'no Go toolchain on PATH';
  if (ifGo) {
    say(`native client not built (${why}); scripts use the Node client`);
    process.exit(0);
  }
  say(`cannot build the native client: ${why}`);
  process.exit(1);
}

const here = `${process.platform}-${process.arch}`;
const targets = all ? TARGETS : TARGETS.filter((target) => target.node === here);
if (targets.length === 0) {
  const message = `no native client target for ${here}; scripts use the Node client`;
  if (ifGo) {
    say(message);
    process.exit(0);
  }
  say(message);
  process.exit(1);
}

for (const target of targets) {
  const dir = join(ROOT, 'dist', 'native', target.node);
  mkdirSync(dir, { recursive: true });
  const started = Date.now();
  // Both into the directory (a trailing slash): the in-script client, and an activity attempt's
  // reporter, which links net/http and so is a binary of its own.
  execFileSync('go', ['build', '-trimpath', '-ldflags', '-s -w', '-o', `${dir}/`, './cmd/spool', './cmd/spool-activity-attempt'], {
    cwd: MODULE,
    stdio: ['ignore', 'inherit', 'inherit'],
    // Static, so the binary runs in any image a pass pod is given (no libc needed).
    env: { ...process.env, CGO_ENABLED: '0', GOOS: target.goos, GOARCH: target.goarch },
  });
  say(`built the native client for ${target.node} in ${((Date.now() - started) / 1000).toFixed(1)} s: ${join(dir, 'spool')} (and spool-activity-attempt)`);
}
