import { AppError, type AppErrorOptions, type ErrorCode } from '../../errors.js';

/**
 * An error of the web tools whose message goes to the model as it is (and may be relayed to the
 * person): a plain sentence with no key, host path, stack or library text in it.
 */
export abstract class WebToolError extends AppError {
  protected constructor({ code, status }: { code: ErrorCode; status: number }, message: string, options: AppErrorOptions) {
    super(code, message, { status, userMessage: message, ...options });
  }
}

/** Enough of a URL to recognise it in an error message, short enough that a huge one cannot flood it. */
export const MAX_SHOWN_URL_CHARS = 200;

/**
 * Why a fetch did not return a page: `refused` by the address policy (or too many redirects),
 * `invalid` URL, `failed` on the network, `timeout`, or `cancelled` by the caller's signal.
 */
export type WebFetchFailure = 'refused' | 'invalid' | 'failed' | 'timeout' | 'cancelled';

const FETCH_FAILURES: Readonly<Record<WebFetchFailure, { code: ErrorCode; status: number }>> = {
  refused: { code: 'FORBIDDEN', status: 403 },
  invalid: { code: 'BAD_REQUEST', status: 400 },
  failed: { code: 'UNPROCESSABLE', status: 502 },
  timeout: { code: 'UNPROCESSABLE', status: 504 },
  cancelled: { code: 'RUN_CANCELLED', status: 409 },
};

/** A URL the server would not or could not fetch, and plainly why. */
export class WebFetchError extends WebToolError {
  constructor(
    readonly failure: WebFetchFailure,
    message: string,
    options: AppErrorOptions = {},
  ) {
    super(FETCH_FAILURES[failure], message, options);
    this.name = 'WebFetchError';
  }
}

/** A URL for an error message: without query and fragment (they may carry tokens), and shortened. */
export function showUrl(url: URL): string {
  const shown = `${url.origin}${url.pathname}`;
  return shown.length > MAX_SHOWN_URL_CHARS ? `${shown.slice(0, MAX_SHOWN_URL_CHARS)}…` : shown;
}

/**
 * Why a search gave no results: the provider `refused` the key (or the request), is
 * `rate_limited`, is `unreachable` (down, 5xx, network, timeout), answered `malformed`, or the
 * caller `cancelled`.
 */
export type SearchFailure = 'refused' | 'rate_limited' | 'unreachable' | 'malformed' | 'cancelled';

const SEARCH_FAILURES: Readonly<Record<SearchFailure, { code: ErrorCode; status: number }>> = {
  refused: { code: 'UNPROCESSABLE', status: 502 },
  rate_limited: { code: 'RATE_LIMITED', status: 503 },
  unreachable: { code: 'UNPROCESSABLE', status: 502 },
  malformed: { code: 'UNPROCESSABLE', status: 502 },
  cancelled: { code: 'RUN_CANCELLED', status: 409 },
};

/** A search that failed; its sentence never holds the API key, the provider's address or its own text. */
export class SearchError extends WebToolError {
  constructor(
    readonly failure: SearchFailure,
    message: string,
    options: AppErrorOptions = {},
  ) {
    super(SEARCH_FAILURES[failure], message, options);
    this.name = 'SearchError';
  }
}

/** A page whose type is not text (an image, a PDF, a binary), saying what it was. */
export class UnreadablePageError extends WebToolError {
  constructor(
    /** The media type that could not be read, `''` when the server sent none. */
    readonly mediaType: string,
    options: AppErrorOptions = {},
  ) {
    super({ code: 'UNPROCESSABLE', status: 415 }, `${mediaType === '' ? 'binary (untyped)' : mediaType} pages cannot be read as text`, options);
    this.name = 'UnreadablePageError';
  }
}
