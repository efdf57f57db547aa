// A preview environment: deploy it, wait for the PR to close (holding no agent), then tear it down.
//
//     spool submit examples/preview.mjs --follow
//     spool event emit pr.closed --payload '{"pr": 7}'    # from another terminal

import { stepFn, waitEvent } from '@hyperspool/sdk';

function deploy(host) {
  console.log(`deploying a preview to ${host}`);
  return { host, url: `https://${host}` };
}

function teardown(env) {
  console.log(`tearing down ${env.url}`);
}

const host = 'pr-7.preview.example';

const env = await stepFn('deploy', () => deploy(host));
await waitEvent('pr.closed');
await stepFn('teardown', () => teardown(env));
