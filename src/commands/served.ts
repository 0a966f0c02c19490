/**
 * @module What a session with a selection would be served, for the commands that answer without a server
 * (`toolsets --live`, `eval`, `advise`): the gate, the client's profile, and the server's own tools.
 */
import type { Inventory, ToolDef } from "../catalog/inventory.js";
import type { Catalog, ClientProfile } from "../catalog/types.js";
import { applyProfile } from "../clients/apply.js";
import { profileOf } from "../clients/match.js";
import { offersToolsetsTool, ownToolDefs } from "../proxy/lists.js";
import { type Refresh, type Resolution, resolveWithRefresh } from "../resolve.js";
import type { Selection } from "../selection.js";

/** The tools a session lists after the resolution's (serve keeps captured values by default). */
export type Extras = (r: Resolution) => ToolDef[];

export function sessionExtras(toolsetsTool: boolean): Extras {
  return (r) => ownToolDefs(r, toolsetsTool && offersToolsetsTool(r), true);
}

/** The resolution a session of `selection` gets: gated (refresh, then recheck), then fitted to its profile. */
export async function servedResolution(
  catalog: Catalog,
  selection: Selection,
  inventory: Inventory,
  refresh: Refresh,
  extras: Extras,
): Promise<{ resolution: Resolution; inventory: Inventory }> {
  const gated = await resolveWithRefresh(catalog, selection, inventory, refresh);
  const resolution = applyProfile(catalog, gated.resolution, selection, extras(gated.resolution));
  return { resolution, inventory: gated.inventory };
}

/**
 * `--client NAME [--client-version V]`: the profile such a client gets (it declares no capabilities here), or
 * a line saying that none matches (it is then served as any client).
 */
export function clientProfile(
  catalog: Catalog,
  name: string | undefined,
  version: string | undefined,
): { profile?: ClientProfile; note?: string } {
  if (name === undefined) return {};
  const profile = profileOf(catalog, { name, ...(version !== undefined ? { version } : {}) }, {});
  return profile
    ? { profile }
    : {
        note: `no client profile matches "${name}"${version ? ` ${version}` : ""}: it is served as any client`,
      };
}
