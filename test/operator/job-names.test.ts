import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { passJobName } from '../../src/operator/naming.js';

/** What Kubernetes takes as a Job name whose pods carry it as a label value: a DNS label's shape, up to 63. */
const VALID = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/** A Run name Kubernetes accepts: a DNS subdomain, up to 253 characters. */
const runName = fc
  .array(fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?$/), { minLength: 1, maxLength: 12 })
  .map((parts) => parts.join('.').slice(0, 253).replace(/[-.]+$/, ''))
  .filter((name) => name.length > 0);

describe('pass Job names', () => {
  it('given a Run name, then pass N is `<name>-p<N>`, readable in kubectl', () => {
    expect(passJobName('refund-7', 1)).toBe('refund-7-p1');
    expect(passJobName('badimage-1', 12)).toBe('badimage-1-p12');
  });

  it('given a Run name too long for 63 characters, then its start, a hash of the whole name and the pass: valid, and apart from a name that shares the start', () => {
    const long = `${'a'.repeat(60)}-one`;
    const other = `${'a'.repeat(60)}-two`;
    expect(passJobName(long, 3)).toMatch(/^a+-[0-9a-f]{8}-p3$/);
    expect(passJobName(long, 3)).toHaveLength(63);
    expect(passJobName(long, 3)).not.toBe(passJobName(other, 3));
    // A cut that would end in '-' or '.' is not where a DNS name may end.
    expect(passJobName(`${'b'.repeat(51)}.-${'c'.repeat(20)}`, 1)).toMatch(/^b{51}-[0-9a-f]{8}-p1$/);
  });

  it('given any Run name and pass, then the Job name is valid and at most 63 characters, and two (name, pass) pairs never share one', () => {
    fc.assert(
      fc.property(runName, fc.integer({ min: 1, max: 100_000 }), runName, fc.integer({ min: 1, max: 100_000 }), (a, passA, b, passB) => {
        const name = passJobName(a, passA);
        expect(name.length).toBeLessThanOrEqual(63);
        expect(name).toMatch(VALID);
        if (a !== b || passA !== passB) expect(name).not.toBe(passJobName(b, passB));
      }),
    );
  });
});
