import { describe, expect, it } from 'vitest';
import { canonicalQuery, signRequest, uriEncode } from '../../src/store/artifacts/s3/sigv4.js';

describe('SigV4 for S3', () => {
  // The GET Object example of the S3 API reference ("Signature Calculations for the Authorization
  // Header: Transferring Payload in a Single Chunk"), with its published signature.
  it('given the S3 reference GET example, then the Authorization header carries its published signature', () => {
    const headers = signRequest({
      method: 'GET',
      host: 'examplebucket.s3.amazonaws.com',
      path: '/test.txt',
      query: {},
      headers: { Range: 'bytes=0-9' },
      bodySha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      region: 'us-east-1',
      credentials: { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' },
      now: new Date('2013-05-24T00:00:00Z'),
    });

    expect(headers.authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41',
    );
  });

  it('given the reference ListObjects example, then its query is canonical and the signature matches', () => {
    const headers = signRequest({
      method: 'GET',
      host: 'examplebucket.s3.amazonaws.com',
      path: '/',
      query: { prefix: 'J', 'max-keys': '2' },
      headers: {},
      bodySha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      region: 'us-east-1',
      credentials: { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' },
      now: new Date('2013-05-24T00:00:00Z'),
    });

    expect(canonicalQuery({ prefix: 'J', 'max-keys': '2' })).toBe('max-keys=2&prefix=J');
    expect(headers.authorization).toMatch(
      /Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7$/,
    );
  });

  it('encodes everything but unreserved characters, and slashes only in object paths', () => {
    expect(uriEncode('run%1/a b~._-')).toBe('run%251%2Fa%20b~._-');
    expect(uriEncode('run%1/a b', true)).toBe('run%251/a%20b');
    expect(uriEncode('é')).toBe('%C3%A9');
  });
});
