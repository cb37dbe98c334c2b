/**
 * Request signing (clearhaus.md §4.4): RSASSA-PKCS1-v1_5 with SHA-256 over the exact body bytes,
 * written as lowercase hex, in the header `Signature: <signing-key-id> RS256-hex <hex>`. The key is
 * the partner's RSA private key (CLEARHAUS_SIGNING_KEY_FILE), read once at start.
 *
 * The key object never shows its key: it lives in a private field, and toString, toJSON and
 * util.inspect all answer a fixed placeholder, so a stray log of the connector's options prints
 * nothing secret.
 */
import { createPrivateKey, type KeyObject, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { inspect } from 'node:util';

/** The setting the key comes from, named in every error so an operator knows what to fix. */
export const SIGNING_KEY_SETTING = 'CLEARHAUS_SIGNING_KEY_FILE';
const PLACEHOLDER = '[Clearhaus signing key]';

export class SigningKeyError extends Error {
  override readonly name = 'SigningKeyError';
}

export class SigningKey {
  readonly #key: KeyObject;

  private constructor(key: KeyObject) {
    this.#key = key;
  }

  /**
   * A key from PEM text (PKCS#1 `RSA PRIVATE KEY` or PKCS#8 `PRIVATE KEY`). Throws SigningKeyError,
   * whose message names `source` and never quotes the text, when it is not an unencrypted RSA
   * private key (RSA-PSS keys are refused too: they cannot make PKCS#1 v1.5 signatures).
   */
  static fromPem(pem: string | Buffer, source = SIGNING_KEY_SETTING): SigningKey {
    let key: KeyObject;
    try {
      key = createPrivateKey({ key: pem, format: 'pem' });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ERR_MISSING_PASSPHRASE') throw new SigningKeyError(`${source}: the RSA private key is encrypted; give it unencrypted (PEM)`);
      throw new SigningKeyError(`${source}: not an RSA private key in PEM form${code ? ` (${code})` : ''}`);
    }
    if (key.asymmetricKeyType !== 'rsa') {
      throw new SigningKeyError(`${source}: not an RSA private key (the PEM holds a ${key.asymmetricKeyType ?? 'non-asymmetric'} key)`);
    }
    return new SigningKey(key);
  }

  /** The lowercase hex RS256 signature of exactly these bytes (a string is taken as its UTF-8 bytes). */
  sign(body: string | Uint8Array): string {
    return sign('sha256', typeof body === 'string' ? Buffer.from(body, 'utf8') : body, this.#key).toString('hex');
  }

  /**
   * sign, computed on libuv's thread pool: a 2048-bit signature costs a third to a whole
   * millisecond of CPU, which on the event loop every other request and callback would wait behind.
   * Signatures may finish in any order; the caller keeps its own.
   */
  signOffLoop(body: string | Uint8Array): Promise<string> {
    const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    return new Promise((resolve, reject) => {
      sign('sha256', bytes, this.#key, (err, signature) => (err ? reject(err) : resolve(signature.toString('hex'))));
    });
  }

  toString(): string {
    return PLACEHOLDER;
  }

  toJSON(): string {
    return PLACEHOLDER;
  }

  [inspect.custom](): string {
    return PLACEHOLDER;
  }
}

/**
 * Reads the PEM file once. Throws SigningKeyError naming CLEARHAUS_SIGNING_KEY_FILE when the file is
 * missing, unreadable, or does not hold an RSA private key; the start should stop on it.
 */
export function loadSigningKey(file: string): SigningKey {
  let pem: Buffer;
  try {
    pem = readFileSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EACCES' || code === 'EPERM'
          ? 'permission denied'
          : code === 'EISDIR'
            ? 'is a directory'
            : (code ?? 'unreadable');
    throw new SigningKeyError(`${SIGNING_KEY_SETTING}: cannot read ${file} (${why})`);
  }
  try {
    return SigningKey.fromPem(pem, `${SIGNING_KEY_SETTING} (${file})`);
  } finally {
    // The key now lives in the KeyObject only; the file's bytes are not kept around.
    pem.fill(0);
  }
}

/** The `Signature` header's value for this body. */
export function signatureHeader(signingKeyId: string, key: SigningKey, body: string | Uint8Array): string {
  return `${signingKeyId} RS256-hex ${key.sign(body)}`;
}
