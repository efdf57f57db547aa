import { createPrivateKey, generateKeyPairSync, randomBytes, sign } from 'node:crypto';

/**
 * A self-signed serving certificate (ECDSA P-256) for the operator's aggregated API, made at
 * start-up so the install needs no certificate manager. kube-apiserver is the only client and the
 * APIService says insecureSkipTLSVerify (as metrics-server's does): the direction that matters,
 * who the caller is, is checked the other way, against the front-proxy CA.
 *
 * node:crypto signs but does not write certificates, so the DER is put together here: it is the
 * smallest X.509 v3 certificate TLS accepts (subject = issuer, one subjectAltName extension).
 */
export function selfSignedCertificate(names: string[], days = 3650): { cert: string; key: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const now = Date.now();
  const name = sequence(set(sequence(oid('2.5.4.3'), utf8(names[0] ?? 'hyperspool'))));
  const ecdsaWithSha256 = sequence(oid('1.2.840.10045.4.3.2'));
  const subjectAltName = sequence(oid('2.5.29.17'), octets(sequence(...names.map((dns) => tagged(0x82, Buffer.from(dns, 'ascii'))))));
  const serial = randomBytes(16);
  // Positive and minimal, as DER wants: a first byte of 0x00 would be padding OpenSSL refuses.
  serial[0] = ((serial[0] ?? 0) & 0x3f) | 0x40;
  const tbs = sequence(
    tagged(0xa0, integer(Buffer.from([2]))), // v3
    integer(serial),
    ecdsaWithSha256,
    name,
    sequence(time(new Date(now - 60_000)), time(new Date(now + days * 86_400_000))),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    tagged(0xa3, sequence(subjectAltName)),
  );
  const signature = sign('sha256', tbs, privateKey);
  const der = sequence(tbs, ecdsaWithSha256, bitString(signature));
  const pem = `-----BEGIN CERTIFICATE-----\n${der.toString('base64').replace(/.{64}/g, '$&\n').trimEnd()}\n-----END CERTIFICATE-----\n`;
  return { cert: pem, key: createPrivateKey(privateKey.export({ type: 'pkcs8', format: 'pem' })).export({ type: 'pkcs8', format: 'pem' }).toString() };
}

function tagged(tag: number, content: Buffer): Buffer {
  const length = content.length;
  const header =
    length < 0x80 ? Buffer.from([tag, length]) : length < 0x100 ? Buffer.from([tag, 0x81, length]) : Buffer.from([tag, 0x82, length >> 8, length & 0xff]);
  return Buffer.concat([header, content]);
}

const sequence = (...parts: Buffer[]): Buffer => tagged(0x30, Buffer.concat(parts));
const set = (...parts: Buffer[]): Buffer => tagged(0x31, Buffer.concat(parts));
const utf8 = (text: string): Buffer => tagged(0x0c, Buffer.from(text, 'utf8'));
const octets = (content: Buffer): Buffer => tagged(0x04, content);
const bitString = (content: Buffer): Buffer => tagged(0x03, Buffer.concat([Buffer.from([0]), content]));

function integer(value: Buffer): Buffer {
  // DER integers are two's complement: a leading 1 bit needs a 0 byte before it.
  return tagged(0x02, (value[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), value]) : value);
}

function oid(dotted: string): Buffer {
  const [first = 0, second = 0, ...rest] = dotted.split('.').map(Number);
  const bytes = [first * 40 + second];
  for (const arc of rest) {
    const base128 = [arc & 0x7f];
    for (let value = arc >> 7; value > 0; value >>= 7) base128.unshift((value & 0x7f) | 0x80);
    bytes.push(...base128);
  }
  return tagged(0x06, Buffer.from(bytes));
}

/** UTCTime until 2049, GeneralizedTime after, as RFC 5280 asks. */
function time(date: Date): Buffer {
  const iso = date.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return date.getUTCFullYear() < 2050 ? tagged(0x17, Buffer.from(`${iso.slice(2)}Z`, 'ascii')) : tagged(0x18, Buffer.from(`${iso}Z`, 'ascii'));
}
