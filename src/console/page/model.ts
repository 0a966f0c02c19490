/**
 * @module The selection the page builds: which toolsets are switched on, which of them are deferred, and what the
 * last try to switch one on said. A switch is on only when toolpacks says the toolset is active: there is no
 * partly-on state, and nothing is stored that could disagree with the server.
 */
import { type SpellContext, shortestQuery, withQuery } from "../spelling.js";
import type { ConsolePayload, Problem, ToolsetCard } from "../wire.js";

export class Model {
  payload: ConsolePayload | undefined;
  /** Switched on (the always ones are on anyway). */
  readonly on = new Set<string>();
  /** Deferred by the URL (`defer=`). */
  readonly defer = new Set<string>();
  /** Why a toolset could not be switched on (its last try), until it is switched on or off again. */
  readonly refused = new Map<string, Problem>();
  /** Being switched on now (the refresh and recheck are under way). */
  readonly pending = new Set<string>();

  /** Spellings already worked out for this answer and these switches (a draw asks for the same ones often). */
  private readonly spelled = new Map<string, string>();

  /** The first answer: the switches start as the deployment's bare URL has them (those that are on). */
  start(p: ConsolePayload): void {
    this.payload = p;
    this.spelled.clear();
    const active = new Set(p.report.active);
    for (const t of p.toolsets) if (!t.always && active.has(t.name)) this.on.add(t.name);
    for (const n of p.selection.deferred) {
      const t = p.toolsets.find((c) => c.name === n);
      if (t && !t.deferred && !t.always && active.has(n)) this.defer.add(n);
    }
  }

  /**
   * A new answer for the current query. A toolset that was on and is no longer active (its upstream went away, a
   * member vanished) is switched off, saying why: the URL the page offers only asks for what works now.
   */
  apply(p: ConsolePayload): void {
    this.payload = p;
    this.spelled.clear();
    const active = new Set(p.report.active);
    for (const name of [...this.on]) {
      if (active.has(name)) continue;
      const card = p.toolsets.find((t) => t.name === name);
      this.on.delete(name);
      this.defer.delete(name);
      if (card?.problem) this.refused.set(name, card.problem);
    }
  }

  card(name: string): ToolsetCard | undefined {
    return this.payload?.toolsets.find((t) => t.name === name);
  }

  private context(http: boolean): SpellContext {
    const p = this.payload!;
    return {
      toolsets: p.toolsets,
      ...(http && p.server.default_selection !== null
        ? { defaultSelection: p.server.default_selection }
        : {}),
      ignoreKeys: p.server.ignore_query_keys,
    };
  }

  private wanted(extra?: string) {
    const forbidden = this.payload!.toolsets.filter((t) => t.forbidden).map((t) => t.name);
    return { on: extra ? [...this.on, extra] : this.on, defer: this.defer, ignore: forbidden };
  }

  private spell(http: boolean, extra?: string): string {
    const key = `${http}|${extra ?? ""}|${[...this.on].sort()}|${[...this.defer].sort()}`;
    let q = this.spelled.get(key);
    if (q === undefined) {
      q = shortestQuery(this.context(http), this.wanted(extra));
      this.spelled.set(key, q);
    }
    return q;
  }

  /** The query a URL of this server needs for the selection (with `extra` switched on too). */
  query(extra?: string): string {
    return this.spell(true, extra);
  }

  /** The same selection for stdio's `--toolsets` and `toolpacks toolsets --select` (no deployment default). */
  plainQuery(): string {
    return this.spell(false);
  }

  /** The MCP URL as a browser here reaches it: this page's origin and prefix (a proxy may add one), the MCP path. */
  url(): string {
    const p = this.payload!;
    const page = location.pathname;
    const tail = `${p.server.ui_path}/`;
    const prefix = page.endsWith(tail) ? page.slice(0, -tail.length) : "";
    return `${location.origin}${withQuery(`${prefix}${p.server.mcp_path}`, this.query())}`;
  }

  /** Some toolset of the selection has `requires:` (a stdio process, with no token, would not get it). */
  gated(): boolean {
    const p = this.payload!;
    return p.toolsets.some((t) => t.requires && (t.always || this.on.has(t.name)));
  }
}
