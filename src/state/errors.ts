/** @module The state store's errors: unavailable (typed, names the store), and the URL redaction they use. */

/**
 * The store could not be reached within its time bound (down, refused, timed out, closed). Carries the
 * store's description (URL with the password redacted) and the operation; the cause is kept, and its
 * message is redacted too.
 */
export class StoreUnavailableError extends Error {
  override readonly name = "StoreUnavailableError";

  constructor(
    readonly store: string,
    readonly operation: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(`state store ${store} is unavailable (${operation}): ${reason}`, options);
  }
}

/** A Redis URL for display: the password (and a username's secret part) replaced by `***`. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    // Not a URL at all: show nothing of it that might be a secret.
    return url.replace(/\/\/[^@/]*@/, "//***@");
  }
}
