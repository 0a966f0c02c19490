/** @module The one error the OAuth client throws: a stable code and a message that never carries a secret. */

export type OAuthFailure =
  | "config"
  | "unknown-upstream"
  | "principal"
  | "challenge"
  | "discovery"
  | "metadata"
  | "registration"
  | "authorization"
  | "state"
  | "iss"
  | "token"
  | "retry-limit"
  | "store"
  | "key"
  | "forbidden"
  | "busy";

/** Messages name upstreams, issuers and OAuth error codes; never tokens, codes, verifiers, secrets or keys. */
export class OAuthFlowError extends Error {
  override readonly name = "OAuthFlowError";
  constructor(
    readonly code: OAuthFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Replaces every occurrence of the given secrets (non-empty) in text coming from elsewhere. */
function redactSecrets(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const s of secrets) if (s && s.length >= 4) out = out.split(s).join("[redacted]");
  return out;
}

/** Text from a remote party, made safe for one line of an error: printable, short. */
export function remoteText(text: unknown, secrets: readonly (string | undefined)[] = []): string {
  if (typeof text !== "string") return "";
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters is the point
  const plain = text.replace(/[\u0000-\u001f\u007f]+/g, " ").trim();
  const short = plain.length > 200 ? `${plain.slice(0, 200)}…` : plain;
  return redactSecrets(short, secrets);
}
