/** @module A token store in memory: for tests and for client-credentials tokens that need not outlive the process. */
import type { TokenStore } from "../types.js";

export class MemoryTokenStore implements TokenStore {
  readonly #entries = new Map<string, string>();
  async get(key: string): Promise<string | undefined> {
    return this.#entries.get(key);
  }
  async put(key: string, value: string): Promise<void> {
    this.#entries.set(key, value);
  }
  async delete(key: string): Promise<void> {
    this.#entries.delete(key);
  }
}
