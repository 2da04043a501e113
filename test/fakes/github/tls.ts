import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A throwaway self-signed certificate on disk and in memory; `cleanup()` deletes `dir`. */
export interface SelfSignedCert {
  /** The fresh temp directory holding both files. */
  dir: string;
  /** PEM certificate; also the CA file a client trusts (`SSL_CERT_FILE`, Node's `ca`). */
  certPath: string;
  /** PEM private key (unencrypted PKCS#8). */
  keyPath: string;
  cert: string;
  key: string;
  /** Removes `dir` and both files; safe to call twice. */
  cleanup: () => void;
}

/**
 * Creates a self-signed certificate valid one day for `127.0.0.1` (IP SAN) and `localhost`
 * (DNS SAN), with a P-256 key, by running `openssl req -x509` (OpenSSL 1.1.1+ for `-addext`).
 * Clients verify names against the SAN only, so both SANs are required; the cert is also its
 * own CA (`basicConstraints CA:TRUE`, as `req -x509` sets by default), which is what lets Go's
 * `SSL_CERT_FILE` and Node's `ca` trust it directly. Takes ~20-50 ms.
 * @throws Error if `openssl` is missing or fails (its stderr in the message); the temp dir is removed then.
 */
export function createSelfSignedCert(options: { openssl?: string } = {}): SelfSignedCert {
  const dir = mkdtempSync(join(tmpdir(), 'fake-github-tls-'));
  const certPath = join(dir, 'cert.pem');
  const keyPath = join(dir, 'key.pem');
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  try {
    execFileSync(
      options.openssl ?? 'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1,DNS:localhost',
        '-keyout',
        keyPath,
        '-out',
        certPath,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
  } catch (error) {
    cleanup();
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    throw new Error(`openssl could not create a self-signed certificate${stderr ? `: ${stderr}` : ''}`, { cause: error });
  }
  return { dir, certPath, keyPath, cert: readFileSync(certPath, 'utf8'), key: readFileSync(keyPath, 'utf8'), cleanup };
}
