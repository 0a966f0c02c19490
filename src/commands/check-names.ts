/**
 * @module `check`'s warnings about upstream tools exposed as `find_tools` or `call_tool`: listed beside a deferred
 * toolset, such a tool takes the name of toolpacks' own (SPEC §13.1). Exact members are known from the config;
 * glob members only from what the upstreams list (`--live`).
 */
import { exposedName } from "../catalog/names.js";
import type { Catalog, Toolset } from "../catalog/types.js";
import type { Resolution } from "../resolve.js";
import { shadowLoss } from "../search/deferred.js";
import { CALL_TOOL, FIND_TOOLS } from "../search/tools.js";

const NAMES: ReadonlySet<string> = new Set([FIND_TOOLS, CALL_TOOL]);

function warning(where: string, ref: string, toolset: string, name: string, upstream: string): string {
  return `${where}: warning: ${ref} in toolset ${toolset} is exposed as "${name}": listed beside a deferred toolset it takes the name of toolpacks' own ${name}, and ${shadowLoss(name)} (rename it with "as:", or give upstream ${upstream} a "prefix:")`;
}

/** A toolset that lists its tools whenever it is active, while another toolset can be deferred beside it. */
function listedBesideDeferred(catalog: Catalog, t: Toolset): boolean {
  return !t.deferred && catalog.toolsets.some((o) => o !== t && (o.deferred || !o.always));
}

/** From the config alone: exact tool members exposed as find_tools or call_tool in a toolset that is listed. */
export function staticNameWarnings(catalog: Catalog): string[] {
  const out: string[] = [];
  for (const t of catalog.toolsets) {
    if (!listedBesideDeferred(catalog, t)) continue;
    for (const m of t.members) {
      if (m.kind !== "tool" || m.regex) continue;
      const name = exposedName(m.pattern, catalog.upstreams.get(m.upstream)?.prefix ?? "", m.as);
      if (NAMES.has(name)) out.push(warning(m.where, m.ref, t.name, name, m.upstream));
    }
  }
  return out;
}

/** From what the upstreams list (every toolset on): tools a glob member exposes under those names. */
export function liveNameWarnings(catalog: Catalog, everything: Resolution): string[] {
  const out: string[] = [];
  for (const name of NAMES) {
    const route = everything.tool.get(name);
    if (!route) continue;
    for (const toolset of route.toolsets) {
      const t = catalog.toolset.get(toolset);
      if (!t || !listedBesideDeferred(catalog, t)) continue;
      const tools = t.members.filter((m) => m.kind === "tool" && m.upstream === route.upstream);
      // An exact member is warned of without --live.
      if (tools.some((m) => !m.regex && m.pattern === route.original)) continue;
      const glob = tools.find((m) => m.regex?.test(route.original));
      if (glob)
        out.push(warning(glob.where, `${route.upstream}/${route.original}`, toolset, name, route.upstream));
    }
  }
  return out;
}
