/** @module A malformed setting found after validation (a URL, a range): its path, what is wrong, how to fix it. */

/**
 * Thrown by modules that compile their own section (`state:`, `tracing:`) or read an environment variable;
 * the config layer turns it into a positioned `FILE:LINE:COL` error from `path`.
 */
export class SettingError extends Error {
  override readonly name = "SettingError";

  constructor(
    /** The setting's path (`state.store`) or the environment variable's name. */
    readonly path: string,
    readonly detail: string,
    readonly hint: string,
  ) {
    super(`${path}: ${detail} (${hint})`);
  }
}
