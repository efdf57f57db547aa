import { readFileSync } from 'node:fs';
import { parsePipeline } from '../../src/pipeline/parse.js';
import type { Pipeline } from '../../src/pipeline/types.js';

/** Reads test/pipeline/fixtures/<name>.yaml: the pipelines of the recipes, copied as they are written there. */
export function fixtureText(name: string): string {
  return readFileSync(new URL(`fixtures/${name}.yaml`, import.meta.url), 'utf8');
}

export function fixture(name: string): Pipeline {
  return parsePipeline(fixtureText(name), `${name}.yaml`);
}

/** The message parsePipeline refuses `text` with (fails the test if it is accepted). */
export function refusal(text: string, file = 'p.yaml'): string {
  try {
    parsePipeline(text, file);
  } catch (error) {
    return error instanceof Error ? `${error.constructor.name}: ${error.message}` : String(error);
  }
  throw new Error(`accepted:\n${text}`);
}
