/** @module What a client can be asked: the capability a server→client request needs. */
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";

/**
 * The client capability a server→client request needs, or undefined. Elicitation has modes: an empty
 * `elicitation: {}` means form only (as before modes existed); URL mode needs `elicitation.url`.
 */
export function missingCapability(
  caps: ClientCapabilities | undefined,
  method: string,
  params: unknown,
): string | undefined {
  if (method === "sampling/createMessage") return caps?.sampling ? undefined : "sampling";
  if (method === "roots/list") return caps?.roots ? undefined : "roots";
  if (method !== "elicitation/create") return undefined;
  const e = caps?.elicitation as { form?: object; url?: object } | undefined;
  if (!e) return "elicitation";
  const mode = (params as { mode?: string } | undefined)?.mode ?? "form";
  if (mode === "url") return e.url ? undefined : "elicitation.url";
  return e.form || !e.url ? undefined : "elicitation.form";
}
