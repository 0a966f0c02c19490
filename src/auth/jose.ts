/** @module jose, loaded at the first token check rather than at start: a serve path without JWTs never loads it. */
type Jose = typeof import("jose");

let loaded: Promise<Jose> | undefined;

export function jose(): Promise<Jose> {
  loaded ??= import("jose");
  return loaded;
}
