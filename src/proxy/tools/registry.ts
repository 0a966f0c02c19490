/**
 * @module The tools of a resolution, upstream and built-in alike, in one registry: what tools/list shows (in its
 * order), what `tools/call NAME` runs, and what `call_tool {name}` runs. A built-in tool (list_server_toolsets,
 * inspect_state, find_tools, call_tool) is an entry like an upstream tool: a feature adds one by offering a
 * `BuiltIn`, never by a branch in the call path. Built once per resolution (they are immutable), shared by
 * every session that has it.
 */
import type { ToolDef } from "../../catalog/inventory.js";
import type { Resolution, Route } from "../../resolve.js";
import { listedRoutes, listsUpstreamTool } from "../../search/deferred.js";
import type { Params } from "../peer.js";

/**
 * A tool of toolpacks' own, offered beside the upstreams' tools. `C`: what it is run with (the session, the
 * request, the params: tools/builtins.ts says; the registry only holds it).
 */
export type BuiltIn<C = unknown> = BuiltInTool & BuiltInAction<C>;

/**
 * What a built-in does: runs itself, or (call_tool) stands for the tools/call of the tool it names, which the
 * pipeline runs through its stages (checks, capture, metrics, logs) and observes as that tool.
 */
type BuiltInAction<C> =
  | { run(c: C): Promise<Params> | Params }
  | {
      /** The params of the tools/call it stands for; throws its own refusal. */ names(
        params: Params,
      ): Params;
    };

interface BuiltInTool {
  readonly name: string;
  /** Where it stands in tools/list: with the search tools (first), or with the proxy's own tools (last). */
  readonly place: "search" | "own";
  /** call_tool may run it by name (every built-in but call_tool itself). */
  readonly viaCallTool: boolean;
  /** Whether a session with this resolution has it (never where a listed upstream tool takes its name). */
  offered(resolution: Resolution): boolean;
  /** Its definition in this resolution's list (find_tools' says whether call_tool stands beside it). */
  definition(resolution: Resolution, offered: ReadonlySet<string>): ToolDef;
}

/** What a name runs: an upstream tool by its route, or a built-in. */
export type ToolEntry = { readonly route: Route } | { readonly builtIn: BuiltIn };

export class ToolRegistry {
  /** What tools/list shows, in order: the listed upstream tools, the search tools, the proxy's own. */
  readonly listed: readonly unknown[];
  private readonly builtIns = new Map<string, BuiltIn>();

  constructor(
    private readonly resolution: Resolution,
    builtIns: readonly BuiltIn[],
  ) {
    const offered = builtIns.filter((b) => b.offered(resolution));
    const names = new Set(offered.map((b) => b.name));
    for (const b of offered) this.builtIns.set(b.name, b);
    const defs = (place: BuiltIn["place"]) =>
      offered.filter((b) => b.place === place).map((b) => b.definition(resolution, names));
    this.listed = Object.freeze([
      ...listedRoutes(resolution).map((r) => r.definition),
      ...defs("search"),
      ...defs("own"),
    ]);
  }

  /**
   * What `tools/call NAME` runs: a listed upstream tool, else the built-in of that name, else a deferred upstream
   * tool (SPEC §13.1: the name tools/list shows is the built-in's over a deferred tool of that name).
   */
  direct(name: string): ToolEntry | undefined {
    const route = this.resolution.tool.get(name);
    if (route && listsUpstreamTool(this.resolution, name)) return { route };
    const builtIn = this.builtIns.get(name);
    if (builtIn) return { builtIn };
    return route ? { route } : undefined;
  }

  /** What `call_tool {name}` runs: an upstream tool (listed or deferred), else a built-in but call_tool. */
  through(name: string): ToolEntry | undefined {
    const route = this.resolution.tool.get(name);
    if (route) return { route };
    const builtIn = this.builtIns.get(name);
    return builtIn?.viaCallTool ? { builtIn } : undefined;
  }

  /** Whether the session offers this built-in. */
  offers(name: string): boolean {
    return this.builtIns.has(name);
  }
}

/** The registries of a set of built-ins, one per resolution, made on first use. */
export class ToolRegistries {
  private readonly made = new WeakMap<Resolution, ToolRegistry>();

  constructor(readonly builtIns: readonly BuiltIn[]) {}

  of(resolution: Resolution): ToolRegistry {
    let r = this.made.get(resolution);
    if (!r) {
      r = new ToolRegistry(resolution, this.builtIns);
      this.made.set(resolution, r);
    }
    return r;
  }
}
/** The definitions a list needs, typed as the resolution's tool definitions are. */
