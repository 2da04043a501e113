import { generateKeyPairSync, verify } from 'node:crypto';

/** A GitHub App key pair as PEM: GitHub hands out PKCS#1 private keys (`BEGIN RSA PRIVATE KEY`). */
export interface AppKeyPair {
  privateKey: string;
  publicKey: string;
}

/**
 * A fresh 2048-bit RSA key pair for a test GitHub App: `privateKey` in the format GitHub's
 * "Generate a private key" button downloads (PKCS#1 by default, PKCS#8 on request),
 * `publicKey` as SPKI for the fake to verify App JWTs with. Takes ~50-200 ms; make one per file.
 */
export function generateAppKeyPair(options: { format?: 'pkcs1' | 'pkcs8' } = {}): AppKeyPair {
  return generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: options.format ?? 'pkcs1', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
}

/** The claims of an App JWT that passed {@link verifyAppJwt}. */
export interface AppJwtClaims {
  iat: number;
  exp: number;
  iss: string;
}

/** Why an App JWT was refused, in GitHub's words where GitHub has them. */
export class AppJwtError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AppJwtError';
  }
}

/** GitHub: "exp" must be "no more than 10 minutes into the future"; a minute of clock drift is tolerated here. */
const MAX_LIFETIME_S = 600;
const CLOCK_DRIFT_S = 60;

function decodeSegment(segment: string | undefined): Record<string, unknown> {
  if (segment === undefined) throw new AppJwtError('A JSON web token could not be decoded');
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    if (typeof value === 'object' && value !== null) return value as Record<string, unknown>;
  } catch {
    // Falls through to the same answer GitHub gives for any undecodable token.
  }
  throw new AppJwtError('A JSON web token could not be decoded');
}

/**
 * Checks an App JWT as GitHub does: RS256 signature by the App's key, `iss` = the App id
 * (number or string), `exp` in the future and at most 10 minutes ahead, `iat` not in the future.
 * `nowSeconds` is Unix time.
 * @throws AppJwtError naming the first rule broken.
 */
export function verifyAppJwt(jwt: string, options: { appId: number; publicKey: string; nowSeconds: number }): AppJwtClaims {
  const [headerPart, payloadPart, signaturePart] = jwt.split('.');
  const header = decodeSegment(headerPart);
  const payload = decodeSegment(payloadPart);
  if (header.alg !== 'RS256' || signaturePart === undefined) throw new AppJwtError('A JSON web token could not be decoded');
  const isSigned = verify(
    'RSA-SHA256',
    Buffer.from(`${headerPart}.${payloadPart}`),
    options.publicKey,
    Buffer.from(signaturePart, 'base64url'),
  );
  if (!isSigned) throw new AppJwtError('A JSON web token could not be decoded');
  const { iat, exp, iss } = payload;
  if (String(iss) !== String(options.appId)) throw new AppJwtError('Integration not found');
  if (typeof exp !== 'number' || exp <= options.nowSeconds) {
    throw new AppJwtError(
      "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires",
    );
  }
  if (exp > options.nowSeconds + MAX_LIFETIME_S + CLOCK_DRIFT_S) {
    throw new AppJwtError("'Expiration time' claim ('exp') is too far in the future");
  }
  if (typeof iat !== 'number' || iat > options.nowSeconds + CLOCK_DRIFT_S) {
    throw new AppJwtError("'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued");
  }
  return { iat, exp, iss: String(iss) };
}
