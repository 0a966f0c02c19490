/** @module Reading an upstream's lists: every page, raw (unknown keys and `_meta` kept). */
import type { Offer } from "../catalog/inventory.js";
import { SessionGoneError } from "./http-answer.js";
import type { UpstreamRpcClient as Client } from "./rpc-client.js";
import { message } from "./util.js";

const MAX_PAGES = 100;

/**
 * Tools, prompts, resources and templates, as far as the upstream's capabilities say it has them. Only the tool
 * list is required: a prompts, resources or templates list the upstream does not answer (-32601, as
 * mcp-server-kubernetes does for templates while it advertises resources, or any other failure) is empty, and
 * `onSkipped` hears why. A failed tools/list fails the whole reading, with the reason.
 */
export async function listOffer(
  client: Client,
  timeout: number,
  onSkipped?: (method: string, reason: string) => void,
): Promise<Offer> {
  const caps = client.getServerCapabilities() ?? {};
  const optional = async <T>(method: string, key: string): Promise<T[]> => {
    try {
      return await listAll<T>(client, method, key, timeout);
    } catch (err) {
      if (err instanceof SessionGoneError) throw err;
      if ((err as { code?: unknown }).code !== -32601) onSkipped?.(method, message(err));
      return [];
    }
  };
  const [tools, prompts, resources, templates] = await Promise.all([
    caps.tools
      ? listAll<Offer["tools"][number]>(client, "tools/list", "tools", timeout).catch((err: unknown) => {
          if (err instanceof SessionGoneError) throw err;
          throw new Error(`tools/list failed: ${message(err)}`, { cause: err });
        })
      : [],
    caps.prompts ? optional<Offer["prompts"][number]>("prompts/list", "prompts") : [],
    caps.resources ? optional<Offer["resources"][number]>("resources/list", "resources") : [],
    caps.resources
      ? optional<Offer["templates"][number]>("resources/templates/list", "resourceTemplates")
      : [],
  ]);
  return { tools, prompts, resources, templates };
}

async function listAll<T>(client: Client, method: string, key: string, timeout: number): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const result = await client.request(method, cursor ? { cursor } : {}, { timeout });
    items.push(...((result[key] as T[] | undefined) ?? []));
    cursor = result.nextCursor as string | undefined;
    if (!cursor) break;
  }
  return items;
}
