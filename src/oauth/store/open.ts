/** @module The credentials store serving opens at start: encrypted files, or memory when nothing needs to persist. */
import type { OAuthUpstream, TokenStore } from "../types.js";
import { EncryptedFileTokenStore } from "./file.js";
import { parseTokenKey, TOKEN_KEY_ENV, tokenKeyFromEnv } from "./key.js";
import { MemoryTokenStore } from "./memory.js";

/**
 * Per-user upstreams, and shared ones authorized by a person (`toolpacks login`), keep tokens across restarts:
 * without TOOLPACKS_TOKEN_KEY they refuse to start. Client-credentials-only configs can hold tokens in memory.
 */
export async function openTokenStore(
  stateDir: string,
  env: Readonly<Record<string, string | undefined>>,
  upstreams: readonly OAuthUpstream[],
): Promise<TokenStore | undefined> {
  if (!upstreams.length) return undefined;
  if (!env[TOKEN_KEY_ENV]?.trim()) {
    const persisted = upstreams.filter(
      (u) => u.oauth.mode === "per-user" || (u.oauth.grant ?? "authorization_code") === "authorization_code",
    );
    if (persisted.length) {
      const names = persisted.map((u) => `${u.name} (${u.oauth.mode})`).join(", ");
      tokenKeyFromEnv(env, `OAuth for upstream ${names}`);
    }
    return new MemoryTokenStore();
  }
  return EncryptedFileTokenStore.open(stateDir, parseTokenKey(env[TOKEN_KEY_ENV]));
}
