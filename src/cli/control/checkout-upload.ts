import { Readable } from 'node:stream';
import { errorOfAnswer } from '../../common/errors.js';
import { ServerUnavailable, serverUrl } from './http.js';
import type { ErrorAnswer, ResponseOf } from '../../api/responses.js';

/**
 * `spool submit FILE --with DIR`: the files under DIR (minus .gitignore's) uploaded as a tar
 * archive, streamed as it is made, to `POST /v1/checkouts`; answers the id `POST /v1/runs` names.
 * Checked (exists, under the limit) before anything is sent.
 */
export async function uploadCheckout(server: string | undefined, dir: string): Promise<string> {
  const { bundleStream, checkoutFiles } = await import('../../dev/checkout-bundle.js');
  const { files } = checkoutFiles(dir);
  const url = serverUrl(server);
  let response: Response;
  try {
    response = await fetch(`${url}/v1/checkouts`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-tar' },
      body: Readable.toWeb(Readable.from(bundleStream(files))) as ReadableStream<Uint8Array>,
      duplex: 'half',
    } as RequestInit);
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new ServerUnavailable(url, cause?.code ?? cause?.message ?? (error as Error).message);
  }
  const answer = (await response.json().catch(() => ({}))) as Partial<ResponseOf<'POST /checkouts'> & ErrorAnswer>;
  if (!response.ok || !answer.checkout) {
    throw errorOfAnswer(response.status, answer.error?.code, `--with ${dir}: ${answer.error?.message ?? `the server answered ${response.status}`}`);
  }
  return answer.checkout;
}
