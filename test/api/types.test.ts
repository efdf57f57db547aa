import { describe, expectTypeOf, it } from 'vitest';
import type { RequestOf } from '../../src/api/requests.js';
import type { ResponseOf, Run } from '../../src/api/responses.js';

/**
 * The TypeScript types derived from the API's schemas (src/api/from-schema.ts) say what the schemas
 * say. Checked by tsc (`npm run lint` compiles test/): a wrong derivation fails to compile.
 */
describe('the types derived from the schemas', () => {
  it('a request: required fields, optional ones, their types, and no others', () => {
    expectTypeOf<RequestOf<'POST /runs'>>().toHaveProperty('workflow').toEqualTypeOf<string>();
    expectTypeOf<RequestOf<'POST /runs'>['idempotencyKey']>().toEqualTypeOf<string | null | undefined>();
    expectTypeOf<RequestOf<'POST /runs/:id/approvals/:job'>['decision']>().toEqualTypeOf<'approve' | 'reject'>();
    expectTypeOf<RequestOf<'PUT /state/:entity/:key'>['project']>().toEqualTypeOf<string | undefined>();
    // @ts-expect-error a field the route does not take
    const misspelt: RequestOf<'POST /runs/:id/signals'> = { name: 'go', payloads: 1 };
    // @ts-expect-error a required field left out
    const missing: RequestOf<'POST /runs/:id/signals'> = { payload: 1 };
    void [misspelt, missing];
  });

  it('an answer: nested shapes, nulls, enums, records', () => {
    expectTypeOf<ResponseOf<'GET /runs'>>().toEqualTypeOf<{ runs: Run[]; next: string | null; counts?: Record<Run['status'], number> }>();
    expectTypeOf<Run['status']>().toEqualTypeOf<'pending' | 'running' | 'waiting' | 'succeeded' | 'failed' | 'cancelled'>();
    expectTypeOf<Run['outputs']>().toEqualTypeOf<Record<string, string>>();
    expectTypeOf<Run['input']>().toEqualTypeOf<unknown>();
    expectTypeOf<ResponseOf<'GET /runs/:id/logs'>['logs'][number]['base64']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<ResponseOf<'POST /runs/:id/signals'>['queued']>().toEqualTypeOf<true>();
  });
});
