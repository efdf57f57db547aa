import { Ajv } from 'ajv';
import { onFirstUse } from '../common/on-first-use.js';
import type { RawPipeline } from './raw.js';
import schema from './schema.json' with { type: 'json' };
import { problemFor } from './schema-messages.js';

// Compiled once, when a pipeline is first checked. allErrors, so an unknown key can be preferred to the missing
// key it probably is (ajv checks required first); verbose gives each error its schema, which the
// messages use (the keys a map allows, a oneOf's bodies). Union types: depends_on is a name or a list.
const validator = onFirstUse(() => new Ajv({ allErrors: true, verbose: true, allowUnionTypes: true, strict: true }).compile<RawPipeline>(schema));

/** Checks a parsed document against schema.json; throws a PipelineProblem for the first problem. */
export function checkSchema(data: unknown): RawPipeline {
  const validate = validator();
  if (validate(data)) return data;
  throw problemFor(validate.errors ?? [], data);
}
