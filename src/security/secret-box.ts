/**
 * Authenticated encryption (AES-256-GCM) for secrets that must be used verbatim later: card
 * numbers in the vault, webhook secrets, callback Authorization values. The key comes from
 * PAYMENTS_VAULT_KEY or is generated once and kept beside the data with owner-only permissions.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export interface Sealer {
  seal(plaintext: string): string;
  open(sealed: string): string;
}

const VERSION = 'v1';

export class SecretBox implements Sealer {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('SecretBox needs a 32-byte key');
  }

  seal(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const tag = cipher.getAuthTag();
    return [VERSION, iv.toString('base64url'), tag.toString('base64url'), ciphertext.toString('base64url')].join('.');
  }

  open(sealed: string): string {
    const [version, iv, tag, ciphertext] = sealed.split('.');
    if (version !== VERSION || !iv || !tag || ciphertext === undefined) throw new Error('not a sealed value');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
  }

  /** Key id for logs: a hash prefix, never the key. */
  get keyId(): string {
    return createHash('sha256').update(this.key).digest('hex').slice(0, 8);
  }
}

/**
 * Reads a secret file from the data directory, or creates it (mode 0600) with `generate()`.
 * Used for the vault key and the operator key so that a second start reuses them.
 */
export function loadOrCreateSecretFile(dataDir: string, name: string, generate: () => string): { value: string; created: boolean } {
  const file = path.join(dataDir, name);
  if (fs.existsSync(file)) return { value: fs.readFileSync(file, 'utf8').trim(), created: false };
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const value = generate();
  try {
    fs.writeFileSync(file, `${value}\n`, { mode: 0o600, flag: 'wx' });
    return { value, created: true };
  } catch (err) {
    // Another process created it first: use theirs.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return { value: fs.readFileSync(file, 'utf8').trim(), created: false };
    throw err;
  }
}

export const hashSecret = (secret: string): string => createHash('sha256').update(secret).digest('hex');
