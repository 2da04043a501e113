/** Reading raw results the same way on both drivers (PGlite and postgres-js). */

/**
 * A plain Uint8Array view: postgres-js returns Buffers, and a Buffer would leak out of a `bytes`
 * value (and compare unequal to the Uint8Array that was stored).
 */
export function bytes(value: Uint8Array | undefined): Uint8Array {
  if (value === undefined) return new Uint8Array();
  return value.constructor === Uint8Array ? value : new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
}

/** Rows of a raw `execute`: postgres-js returns an array, PGlite an object with `rows`. */
export function rowsOf<T>(result: unknown): T[] {
  return (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[];
}
