// Calling the spool verbs from Node: one subprocess per durable call, stdout as the recorded result.
import { execFileSync } from 'node:child_process';

const spool = (...args) => execFileSync('spool', args, { encoding: 'utf8' }).trim();

const version = spool('step', 'version', '--', 'date', '+%Y%m%d.%H%M%S');
spool('sleep', '2s');
spool('step', 'deploy', '--', 'echo', 'deploying', version);
console.log(`released ${version}`);
