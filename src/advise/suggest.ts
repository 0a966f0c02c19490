/**
 * @module Which toolsets to change, from what each costs per turn and how it was used: on but never called →
 * `default: false` (or `deferred: true` when a default does not put it on); big and rarely called →
 * `deferred: true`; called in most of its sessions → kept. Pure.
 */
import type { Catalog } from "../catalog/types.js";
import type { Usage } from "./usage.js";

export interface Thresholds {
  /** ≈tokens per turn from which a toolset counts as big. */
  readonly bigTokens: number;
  /** Below this share of its sessions calling it, a toolset is rarely called. */
  readonly rare: number;
  /** From this share of its sessions calling it, it is kept whatever its size. */
  readonly most: number;
}

export const DEFAULT_THRESHOLDS: Thresholds = Object.freeze({ bigTokens: 1000, rare: 0.2, most: 0.5 });

/** One key to set in a toolset's declaration. */
export interface Edit {
  readonly toolset: string;
  readonly key: "default" | "deferred";
  readonly value: boolean;
}

export interface Row {
  readonly toolset: string;
  /** What its tools cost per turn when listed; undefined when its upstreams could not be listed. */
  readonly tokens?: number;
  readonly sessions: number;
  readonly calledIn?: number;
  readonly calls: number;
  /** Calls per 1,000 ≈tokens of per-turn cost: what it gives for what it costs. */
  readonly callsPerKiloToken?: number;
  /** How it is configured now: default, opt-in, always, deferred. */
  readonly now: string;
  readonly suggestion: string;
  readonly edit?: Edit;
}

function state(t: Catalog["toolsets"][number]): string {
  return [t.always ? "always" : t.default ? "default" : "opt-in", ...(t.deferred ? ["deferred"] : [])].join(
    ", ",
  );
}

/** The share of its sessions that called it (audit), or calls per session (metrics, which has no session label). */
function calledShare(u: { sessions: number; calledIn?: number; calls: number }): number {
  if (!u.sessions) return 0;
  return (u.calledIn ?? u.calls) / u.sessions;
}

export function suggest(
  catalog: Catalog,
  tokens: ReadonlyMap<string, number>,
  usage: Usage,
  thresholds: Thresholds = DEFAULT_THRESHOLDS,
): Row[] {
  return catalog.toolsets.map((t) => {
    const u = usage.byToolset.get(t.name) ?? { sessions: 0, calls: 0 };
    const cost = tokens.get(t.name);
    const row = {
      toolset: t.name,
      ...(cost !== undefined ? { tokens: cost } : {}),
      sessions: u.sessions,
      ...(u.calledIn !== undefined ? { calledIn: u.calledIn } : {}),
      calls: u.calls,
      ...(cost ? { callsPerKiloToken: (u.calls * 1000) / cost } : {}),
      now: state(t),
    };
    const keep = (why: string): Row => ({ ...row, suggestion: `keep: ${why}` });
    const change = (edit: Edit, why: string): Row =>
      t.implicit
        ? {
            ...row,
            suggestion: `${edit.key}: ${edit.value} would help (${why}): declare it as a toolset first`,
          }
        : { ...row, suggestion: `${edit.key}: ${edit.value} (${why})`, edit };
    if (!u.sessions) return keep("no session had it");
    if (t.deferred) return keep("already deferred");
    const share = calledShare(u);
    if (u.calls === 0) {
      const why = `on in ${u.sessions} session(s), never called`;
      return t.default && !t.always
        ? change({ toolset: t.name, key: "default", value: false }, why)
        : change({ toolset: t.name, key: "deferred", value: true }, why);
    }
    if (share >= thresholds.most) return keep("called in most of its sessions");
    if (cost !== undefined && cost >= thresholds.bigTokens && share < thresholds.rare)
      return change(
        { toolset: t.name, key: "deferred", value: true },
        `≈${cost} tokens a turn, called in ${Math.round(share * 100)}% of its sessions`,
      );
    return keep("used now and then, and not big");
  });
}
