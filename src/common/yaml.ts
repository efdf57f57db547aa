import type * as Yaml from 'yaml';
import { loadWhenUsed } from './load-when-used.js';

/**
 * The YAML parser, loaded when a document is first read: every module checking workflow files names
 * it, and a `spool run` of a script, which reads none, loaded its 70 files (about 45 ms), as did every
 * control command (`spool runs -o yaml` is the one that prints YAML).
 */
export const yaml = loadWhenUsed<typeof Yaml>('yaml');
