import { findOnPath } from '../../workflow-file/check.js';
import { PLATFORM, scriptClient } from '../../agent/script-client.js';

/** `spool doctor`: what scripts get on this machine, so a person can tell why a call is slow or missing. */
export function doctor(): string[] {
  const client = scriptClient();
  const interpreters = ['bash', 'python3', 'node'].map((name) => `${name} ${findOnPath(name) ?? 'not found'}`);
  return [
    `platform: ${PLATFORM}, Node ${process.version}`,
    `in-script client: ${client.kind === 'native' ? 'native' : 'Node'} (${client.source})`,
    `  first on scripts' PATH: ${client.dir}`,
    `interpreters: ${interpreters.join(', ')}`,
  ];
}
