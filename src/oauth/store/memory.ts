/** @module A token store in memory: for tests and for client-credentials tokens that need not outlive the process. */
import type { TokenStore } from "../types.js";

export class MemoryTokenStore implements TokenStore {
  readonly #entries = new Map<string, { value: string; expiresAt?: number }>();
  async get(key: string): Promise<string | undefined> {
    const e = this.#entries.get(key);
    if (e?.expiresAt !== undefined && e.expiresAt < Date.now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return e?.value;
  }
  async put(key: string, value: string, options: { readonly expiresAt?: number } = {}): Promise<void> {
    if (options.expiresAt !== undefined) {
      const now = Date.now();
      for (const [k, e] of this.#entries)
        if (e.expiresAt !== undefined && e.expiresAt < now) this.#entries.delete(k);
    }
    this.#entries.set(key, {
      value,
      ...(options.expiresAt !== undefined ? { expiresAt: options.expiresAt } : {}),
    });
  }
  async delete(key: string): Promise<void> {
    this.#entries.delete(key);
  }
}
