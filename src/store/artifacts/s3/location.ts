import { UsageError } from '../../../common/errors.js';
import type { S3Location } from './s3-blobs.js';

export interface ArtifactsFlags {
  /** `postgresql` (the default) or `s3://bucket[/prefix]`. */
  artifacts?: string;
  s3Endpoint?: string;
  s3Region?: string;
}

/**
 * Reads `--artifacts`, `--s3-endpoint` and `--s3-region` (spool operator, spool dev), with the
 * credentials from the environment as AWS tools read them (on a cluster, a Secret mounted as env:
 * docs/artifacts.md). Undefined: artifacts' bytes stay in the journal's database. Each mistake is
 * one line that names the flag.
 */
export function artifactsLocation(flags: ArtifactsFlags, env: NodeJS.ProcessEnv = process.env): S3Location | undefined {
  const value = flags.artifacts ?? 'postgresql';
  if (value === 'postgresql') {
    if (flags.s3Endpoint !== undefined)
      throw new UsageError(`--s3-endpoint is for --artifacts s3://BUCKET/PREFIX; artifacts are in PostgreSQL here`);
    return undefined;
  }
  const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(value);
  if (!match)
    throw new UsageError(
      `--artifacts takes postgresql or s3://BUCKET[/PREFIX] (a bucket name of 3-63 lower-case letters, digits, dots and dashes), not '${value}'`,
    );
  const prefix = (match[2] ?? '').replace(/^\/+|\/+$/g, '');
  let endpoint: string | undefined;
  if (flags.s3Endpoint !== undefined) {
    let url: URL;
    try {
      url = new URL(flags.s3Endpoint);
    } catch {
      throw new UsageError(
        `--s3-endpoint takes a URL such as http://minio.storage.svc:9000, not '${flags.s3Endpoint}'`,
      );
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new UsageError(`--s3-endpoint must be http:// or https://, not '${flags.s3Endpoint}'`);
    endpoint = url.toString().replace(/\/$/, '');
  }
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey)
    throw new UsageError(`--artifacts ${value} needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment`);
  return {
    bucket: match[1] ?? '',
    prefix: prefix === '' ? '' : `${prefix}/`,
    ...(endpoint ? { endpoint } : {}),
    region: flags.s3Region ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? 'us-east-1',
    credentials: {
      accessKeyId,
      secretAccessKey,
      ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}),
    },
  };
}
