/**
 * The pipeline document as written, once schema.json has accepted it: YAML keys, durations as
 * text, shorthands not yet expanded. convert.ts turns it into the Pipeline of types.ts.
 */

export interface RawConcurrency {
  group: string;
  /** queue, cancel-running or skip, or a `${{ }}` expression over input yielding one. */
  policy?: string;
}

export interface RawThrottle {
  limit: number;
  period: string;
  key?: string;
  burst?: number;
  policy?: 'queue' | 'drop';
}

export interface RawStep {
  name: string;
  run: string;
}

export interface RawFanOut {
  items: unknown[] | string;
  max_parallel?: number;
  rate?: string | { limit: number; period: string };
  steps?: RawStep[];
  workflow?: string;
}

import type { ChatNotify } from './types.js';

export interface RawFormField {
  type: 'string' | 'number' | 'boolean';
  label?: string;
  required?: boolean;
  default?: string | number | boolean;
  options?: string[];
  min?: number;
  max?: number;
}

export interface RawJob {
  depends_on?: string | string[];
  if?: string;
  steps?: RawStep[];
  script?: string;
  approval?: { prompt: string; timeout?: string; form?: Record<string, RawFormField>; notify?: ChatNotify; approvers?: { count: number; from: string[] } };
  fan_out?: RawFanOut;
  retry?: number | { attempts: number; backoff?: string };
  /** No policy here: a job waits for its group's lock (schema.json, jobConcurrency). */
  concurrency?: { group: string };
}

export interface RawPipeline {
  name: string;
  concurrency?: RawConcurrency;
  throttle?: RawThrottle;
  jobs: Record<string, RawJob>;
  outputs?: Record<string, string>;
}
