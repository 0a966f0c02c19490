/**
 * @module A resolution fitted to its selection's client profile: toolsets deferred to meet the caps,
 * descriptions cut to the budget. Pure, and shared by effect: clients whose profiles defer the same toolsets
 * and cut at the same length get the same resolution object (so one list and one search index), and a
 * profile that changes nothing gives the resolution itself, whatever the client's name.
 */

import { deepFreeze } from "../catalog/freeze.js";
import type { ToolDef } from "../catalog/inventory.js";
import type { Catalog, ClientProfile } from "../catalog/types.js";
import { captureNote } from "../resolve/capture.js";
import type { Def, DeferredToolset } from "../resolve/types.js";
import { isDeferred, type Resolution, type Route } from "../resolve.js";
import type { Selection } from "../selection.js";
import { cutDescription } from "./cut.js";
import { planDeferral, type Sized } from "./plan.js";

/** Fitted resolutions kept per resolution, by effect; past it the oldest is computed again when asked. */
const MAX_EFFECTS = 32;

const fitted = new WeakMap<Resolution, Map<string, Resolution>>();

/** The definition with its description cut to `max` bytes (a capture note kept whole after the cut part). */
function cutDefinition(route: Route, max: number): Def | undefined {
  const description = (route.definition as ToolDef).description;
  if (typeof description !== "string") return undefined;
  const note = route.captureOverBytes !== undefined ? `\n\n${captureNote(route)}` : "";
  const own = note && description.endsWith(note) ? description.slice(0, -note.length) : description;
  const cut = cutDescription(own, max);
  return cut === own ? undefined : { ...route.definition, description: `${cut}${note}` };
}

/** What a profile's effect is keyed by: the toolsets it defers and the length it cuts at. */
function effectKey(deferred: readonly string[], profile: ClientProfile): string {
  return `defer=${deferred.join(",")}|cut=${profile.maxDescriptionBytes ?? ""}`;
}

/**
 * `resolution` as the client of `selection.profile` is served it. `extra`: the tools the server lists after
 * the resolution's own (list_server_toolsets, inspect_state), counted against the caps.
 */
export function applyProfile(
  catalog: Catalog,
  resolution: Resolution,
  selection: Selection,
  extra: readonly ToolDef[] = [],
): Resolution {
  const profile = selection.profile;
  if (!profile) return resolution;
  const max = profile.maxDescriptionBytes;
  const cuts = new Map<Route, Def>();
  if (max !== undefined) {
    for (const r of resolution.tools) {
      const def = cutDefinition(r, max);
      if (def) cuts.set(r, def);
    }
  }
  const sized: Sized[] = resolution.tools.map((r) => ({
    toolsets: r.toolsets,
    bytes: Buffer.byteLength(JSON.stringify(cuts.get(r) ?? r.definition)),
  }));
  const extraSize = {
    tools: extra.length,
    bytes: extra.reduce((n, d) => n + Buffer.byteLength(JSON.stringify(d)), 0),
  };
  const plan = planDeferral(catalog, resolution, selection, profile, sized, extraSize, cuts.size > 0);
  const deferredNames = new Set([...resolution.deferred.map((d) => d.name), ...plan.deferred]);
  const listedCuts = [...cuts].filter(([r]) => !isDeferred(deferredNames, r));
  if (!plan.deferred.length && !listedCuts.length) return resolution;
  const key = effectKey(plan.deferred, profile);
  const kept = fitted.get(resolution) ?? new Map<string, Resolution>();
  fitted.set(resolution, kept);
  const known = kept.get(key);
  if (known) return known;
  const made = fittedResolution(catalog, resolution, plan.deferred, plan.reason, new Map(listedCuts), key);
  kept.set(key, made);
  if (kept.size > MAX_EFFECTS) kept.delete(kept.keys().next().value!);
  return made;
}

function fittedResolution(
  catalog: Catalog,
  resolution: Resolution,
  deferred: readonly string[],
  reason: string | undefined,
  cuts: ReadonlyMap<Route, Def>,
  key: string,
): Resolution {
  const byProfile = new Set(deferred);
  const mine: DeferredToolset[] = deferred.map((name) => {
    const t = catalog.toolset.get(name)!;
    return { name, title: t.title, description: t.description, by: "profile" };
  });
  const all = [...resolution.deferred, ...mine];
  const order = resolution.active;
  all.sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name));
  const tools = resolution.tools.map((r) => {
    const def = cuts.get(r);
    return def ? { ...r, definition: def, fullDefinition: r.definition } : r;
  });
  const listing = new Set([...cuts.keys()].flatMap((r) => r.toolsets.filter((t) => !byProfile.has(t))));
  const cutIn = order
    .filter((n) => listing.has(n) && !resolution.deferred.some((d) => d.name === n))
    .map((name) => {
      const t = catalog.toolset.get(name)!;
      return { name, title: t.title, description: t.description };
    });
  return deepFreeze({
    ...resolution,
    key: `${resolution.key}|${key}`,
    tools,
    tool: new Map(tools.map((r) => [r.name, r])),
    deferred: all,
    profile: {
      ...(reason && deferred.length ? { reason } : {}),
      cut: [...cuts.keys()].map((r) => r.name),
      cutIn,
    },
  });
}
