/** @module Reading an upstream's lists: every page, raw (unknown keys and `_meta` kept), with any cache hints. */
import type { ServerCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { ListHint, Offer } from "../catalog/inventory.js";
import { SessionGoneError } from "./http-answer.js";
import { AuthorizationRequiredError } from "./http-auth.js";
import { message } from "./util.js";

const MAX_PAGES = 100;

/** One list request on the upstream's wire (the era's own way of sending it). */
export type ListRequest = (
  method: string,
  params: Record<string, unknown>,
) => Promise<Record<string, unknown>>;

type Kind = "tools" | "prompts" | "resources" | "templates";

/**
 * Tools, prompts, resources and templates, as far as the upstream's capabilities say it has them. Only the tool
 * list is required: a prompts, resources or templates list the upstream does not answer (-32601, as
 * mcp-server-kubernetes does for templates while it advertises resources, or any other failure) is empty, and
 * `onSkipped` hears why. A failed tools/list fails the whole reading, with the reason. A 2026-07-28 upstream's
 * `ttlMs`/`cacheScope` are kept in `hints` (the shortest TTL of a list's pages; `private` if any page is).
 */
export async function listOffer(
  request: ListRequest,
  caps: ServerCapabilities,
  onSkipped?: (method: string, reason: string) => void,
): Promise<Offer> {
  const hints: Partial<Record<Kind, ListHint>> = {};
  const read = <T>(kind: Kind, method: string, key: string) => listAll<T>(request, method, key, kind, hints);
  const optional = async <T>(kind: Kind, method: string, key: string): Promise<T[]> => {
    try {
      return await read<T>(kind, method, key);
    } catch (err) {
      if (err instanceof SessionGoneError || err instanceof AuthorizationRequiredError) throw err;
      if ((err as { code?: unknown }).code !== -32601) onSkipped?.(method, message(err));
      return [];
    }
  };
  const [tools, prompts, resources, templates] = await Promise.all([
    caps.tools
      ? read<Offer["tools"][number]>("tools", "tools/list", "tools").catch((err: unknown) => {
          // Unwrapped: a session gone is replayed, and an authorization required keeps its URL out of reasons.
          if (err instanceof SessionGoneError || err instanceof AuthorizationRequiredError) throw err;
          throw new Error(`tools/list failed: ${message(err)}`, { cause: err });
        })
      : [],
    caps.prompts ? optional<Offer["prompts"][number]>("prompts", "prompts/list", "prompts") : [],
    caps.resources ? optional<Offer["resources"][number]>("resources", "resources/list", "resources") : [],
    caps.resources
      ? optional<Offer["templates"][number]>("templates", "resources/templates/list", "resourceTemplates")
      : [],
  ]);
  return { tools, prompts, resources, templates, ...(Object.keys(hints).length ? { hints } : {}) };
}

async function listAll<T>(
  request: ListRequest,
  method: string,
  key: string,
  kind: Kind,
  hints: Partial<Record<Kind, ListHint>>,
): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const result = await request(method, cursor ? { cursor } : {});
    items.push(...((result[key] as T[] | undefined) ?? []));
    const { ttlMs, cacheScope } = result;
    if (typeof ttlMs === "number" && (cacheScope === "public" || cacheScope === "private")) {
      const was = hints[kind];
      hints[kind] = {
        ttlMs: was ? Math.min(was.ttlMs, ttlMs) : ttlMs,
        cacheScope: was?.cacheScope === "private" ? "private" : cacheScope,
      };
    }
    cursor = result.nextCursor as string | undefined;
    if (!cursor) break;
  }
  return items;
}
