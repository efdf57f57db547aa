import { scriptClient } from '../agent/script-client.js';
import { artifactLimits } from '../engine/limits.js';

/**
 * The SPOOL_* settings passes read later (SPOOL_CLIENT when a pass starts, SPOOL_MAX_ARTIFACT_BYTES
 * and SPOOL_MAX_RUN_ARTIFACT_BYTES when a script puts an artifact), checked when `spool run`,
 * `spool resume` or `spool dev` starts: a bad one is refused in one line before any run is recorded,
 * rather than failing a run mid-way.
 */
export function checkStartSettings(env: NodeJS.ProcessEnv = process.env): void {
  scriptClient(env.SPOOL_CLIENT);
  artifactLimits(env);
}
