/**
 * @hyperspool/sdk: Hyperspool workflows in TypeScript. Each call is a durable call to the pass's
 * agent over `$SPOOL_SOCKET` (docs/sdks.md); the script re-runs from the top on every pass and
 * recorded calls answer from the journal.
 */
export { step, stepFn, lock, type StepOptions, type StepResult } from './steps.js';
export { sleep, waitSignal, waitEvent, type WaitOptions } from './waits.js';
export { activity, activitySubmit, activityCollect, activityWaitAll, type ActivityOptions } from './activities.js';
export { stateGet, stateSet, stateAdd, stateDelete, stateList, type StateOptions } from './state.js';
export { emit, spawn, callNode, callGraph, outputSet, annotate, type EmitOptions, type SpawnKind, type SpawnOptions } from './calls.js';
export { artifactPut, artifactGet, artifactList, type ArtifactPutOptions, type ArtifactGetOptions, type ArtifactInfo } from './artifacts.js';
export {
  SpoolError,
  StepFailed,
  ScriptError,
  AgentUnavailable,
  type SpoolErrorCode,
  type ScriptErrorKind,
} from './errors.js';
