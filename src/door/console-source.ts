/**
 * @module The browser console's source (src/console/source.ts) on the serving core: the report is what GET
 * /toolsets computes (with the resolution it was made from), the recheck refreshes a toolset's instances the way
 * the enable gate does, and the live view reads the instances, the registry and the call counters. Reading any of
 * it starts nothing but what a recheck asks for.
 */
import type { Principal } from "../auth/types.js";
import type { Answer, ConsoleSource, InstanceView, LiveView, ReportView } from "../console/source.js";
import type { Gateway } from "../proxy/gateway.js";
import { reportRefs } from "../proxy/instances.js";
import { ownToolDefs } from "../proxy/lists.js";
import type { Selection } from "../selection.js";
import { errors, WireError } from "../wire/errors.js";
import { identityOf } from "./caller.js";

export function consoleSource(gateway: Gateway): ConsoleSource {
  const instances = (): InstanceView[] =>
    gateway.pool.instances().map(({ ref, state }) => ({
      upstream: ref.upstream,
      kind: ref.kind,
      state,
      era: gateway.pool.existing(ref)?.era,
    }));

  /** GET /toolsets' own steps (Gateway.reportFor), keeping the resolution for the cards. */
  async function reportOf(
    selection: Selection,
    principal: Principal | undefined,
  ): Promise<Answer<ReportView>> {
    const upstreams = gateway.upstreamsOf(selection);
    const read = reportRefs(gateway.catalog, gateway.pool, upstreams, {}, identityOf(principal));
    try {
      const resolution = await gateway.resolve(selection, read.refs, false);
      const report = gateway.report(selection, resolution);
      return { selection, report, resolution, instances: instances() };
    } catch (err) {
      if (!(err instanceof WireError)) throw err;
      return err.status === undefined ? errors.reportUnavailable(err.message) : err;
    } finally {
      read.release();
    }
  }

  return {
    get catalog() {
      return gateway.catalog;
    },
    settings: {
      name: gateway.options.name,
      version: gateway.options.version,
      defaultSelection: gateway.options.defaultSelection,
      ignoreKeys: gateway.options.ignoreKeys ?? [],
      toolsetsTool: gateway.options.toolsetsTool,
    },
    extraTools: (resolution) =>
      ownToolDefs(resolution, gateway.offersToolsetsTool(resolution), gateway.capture),
    async report(query, principal) {
      const s = gateway.select(query, principal);
      return s.ok ? reportOf(s.selection, principal) : errors.badSelection(s.error);
    },
    async recheck(query, name, principal) {
      const s = gateway.select(query, principal);
      if (!s.ok) return errors.badSelection(s.error);
      const toolset = gateway.catalog.toolset.get(name);
      if (!toolset) return errors.noToolset(name);
      if (!s.selection.denied?.includes(name)) {
        const who = identityOf(principal);
        const read = reportRefs(gateway.catalog, gateway.pool, toolset.upstreams, {}, who);
        try {
          // refresh() starts an instance that is not running (after its backoff), as a session's use would.
          await Promise.all([...read.refs.values()].map((ref) => gateway.pool.refresh(ref)));
        } finally {
          read.release();
        }
      }
      return reportOf(s.selection, principal);
    },
    async live(): Promise<LiveView> {
      const sessions = new Map<string, number>();
      for (const s of gateway.sessions.values())
        sessions.set(s.selection.key, (sessions.get(s.selection.key) ?? 0) + 1);
      const counted = await gateway.metrics.calls.get();
      return {
        instances: instances(),
        sessions,
        calls: counted.values.map((v) => ({
          toolset: String(v.labels.toolset ?? ""),
          outcome: String(v.labels.outcome ?? ""),
          count: v.value,
        })),
      };
    },
  };
}
