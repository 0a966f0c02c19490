/** @module The token store's key: 32 bytes from TOOLPACKS_TOKEN_KEY, base64 or hex; any other value is refused. */
import { OAuthFlowError } from "../errors.js";

export const TOKEN_KEY_ENV = "TOOLPACKS_TOKEN_KEY";

const HOW = `set ${TOKEN_KEY_ENV} to 32 random bytes in base64 (44 characters) or hex (64 characters), e.g. \`openssl rand -base64 32\``;

/** Parses the key. The error never repeats the value, only what is wrong with it. */
export function parseTokenKey(value: string | undefined): Buffer {
  const v = value?.trim() ?? "";
  if (!v) throw new OAuthFlowError("key", `${TOKEN_KEY_ENV} is not set: ${HOW}`);
  if (/^[0-9a-fA-F]{64}$/.test(v)) return Buffer.from(v, "hex");
  if (/^[A-Za-z0-9+/]{43}=?$/.test(v) || /^[A-Za-z0-9_-]{43}=?$/.test(v)) {
    const key = Buffer.from(v, "base64");
    if (key.length === 32) return key;
  }
  throw new OAuthFlowError("key", `${TOKEN_KEY_ENV} is not a 32-byte key in base64 or hex: ${HOW}`);
}

/** The key from an environment; `why` says who needs it, in the error when it is missing. */
export function tokenKeyFromEnv(env: Readonly<Record<string, string | undefined>>, why: string): Buffer {
  if (!env[TOKEN_KEY_ENV]?.trim())
    throw new OAuthFlowError(
      "key",
      `${TOKEN_KEY_ENV} is not set: ${why} encrypts tokens at rest with it; ${HOW}`,
    );
  return parseTokenKey(env[TOKEN_KEY_ENV]);
}
