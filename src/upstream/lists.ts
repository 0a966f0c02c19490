/** @module Reading an upstream's lists: every page, raw (unknown keys and `_meta` kept). */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ResultSchema } from "@modelcontextprotocol/sdk/types.js";
import type { Offer } from "../catalog/inventory.js";

const MAX_PAGES = 100;

/** Tools, prompts, resources and templates, as far as the upstream's capabilities say it has them. */
export async function listOffer(client: Client, timeout: number): Promise<Offer> {
  const caps = client.getServerCapabilities() ?? {};
  const [tools, prompts, resources, templates] = await Promise.all([
    caps.tools ? listAll<Offer["tools"][number]>(client, "tools/list", "tools", timeout) : [],
    caps.prompts ? listAll<Offer["prompts"][number]>(client, "prompts/list", "prompts", timeout) : [],
    caps.resources ? listAll<Offer["resources"][number]>(client, "resources/list", "resources", timeout) : [],
    caps.resources
      ? listAll<Offer["templates"][number]>(client, "resources/templates/list", "resourceTemplates", timeout)
      : [],
  ]);
  return { tools, prompts, resources, templates };
}

async function listAll<T>(client: Client, method: string, key: string, timeout: number): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const result = (await client.request(
      { method, params: cursor ? { cursor } : {} } as never,
      ResultSchema,
      {
        timeout,
      },
    )) as Record<string, unknown>;
    items.push(...((result[key] as T[] | undefined) ?? []));
    cursor = result.nextCursor as string | undefined;
    if (!cursor) break;
  }
  return items;
}
