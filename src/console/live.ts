/**
 * @module The console's live panel (SPEC §17.3, `GET <ui>/api/live`): upstream states, open sessions per selection,
 * calls and errors per toolset over the last minutes, and with an audit file its latest calls. A caller who may
 * not use some toolsets sees nothing of them, and of the audit log only its own calls.
 */
import { subjectDigest } from "../audit.js";
import type { Principal } from "../auth/types.js";
import type { Catalog } from "../catalog/types.js";
import { auditTail } from "./audit-tail.js";
import type { CallHistory, Totals } from "./history.js";
import { upstreamStatus } from "./payload.js";
import type { LiveView } from "./source.js";
import type { AuditLine, LivePayload, ServerInfo } from "./wire.js";

const RECENT_CALLS = 20;

export function auditSink(catalog: Catalog): ServerInfo["audit"] {
  const sink = catalog.audit.sink;
  return !sink ? "off" : "file" in sink ? "file" : "stderr";
}

/** Sums the counters by toolset: ok, and errors (a tool's own error, a failure, a timeout; cancelled is neither). */
export function totalsOf(calls: LiveView["calls"]): Totals {
  const out = new Map<string, [number, number]>();
  for (const c of calls) {
    const t = out.get(c.toolset) ?? [0, 0];
    if (c.outcome === "ok") t[0] += c.count;
    else if (c.outcome !== "cancelled") t[1] += c.count;
    out.set(c.toolset, t);
  }
  return out;
}

export async function livePayload(
  catalog: Catalog,
  view: LiveView,
  history: CallHistory,
  now: number,
  denied: ReadonlySet<string>,
  principal: Principal | undefined,
): Promise<LivePayload> {
  const visibleUpstreams = new Set(
    catalog.toolsets.filter((t) => !denied.has(t.name)).flatMap((t) => t.upstreams),
  );
  const totals = totalsOf(view.calls);
  history.record(now, totals);
  const names = catalog.toolsets.map((t) => t.name).filter((n) => !denied.has(n));
  const sink = auditSink(catalog);
  const file = catalog.audit.sink && "file" in catalog.audit.sink ? catalog.audit.sink.file : undefined;
  const recent = file ? await auditTail(file, denied.size ? RECENT_CALLS * 10 : RECENT_CALLS) : [];
  return {
    time: new Date(now).toISOString(),
    upstreams: [...catalog.upstreams.values()]
      .filter((u) => denied.size === 0 || visibleUpstreams.has(u.name))
      .map((u) => upstreamStatus(u.name, u.transport, u.isolation, view.instances)),
    sessions: [...view.sessions]
      .filter(([key]) => !key.split(/[,;=]/).some((n) => denied.has(n)))
      .map(([selection, count]) => ({ selection, count })),
    calls: names.map((toolset) => {
      const [ok, errors] = totals.get(toolset) ?? [0, 0];
      return { toolset, ok, errors, minutes: history.minutes(now, toolset) };
    }),
    audit: { sink, recent: mine(recent, catalog, denied, principal).slice(-RECENT_CALLS) },
  };
}

/** A caller who may use every toolset sees every call; any other, its own calls of toolsets it may use. */
function mine(
  lines: readonly AuditLine[],
  catalog: Catalog,
  denied: ReadonlySet<string>,
  principal: Principal | undefined,
): AuditLine[] {
  if (denied.size === 0) return [...lines];
  if (!principal) return [];
  const me = catalog.audit.subject === "digest" ? subjectDigest(principal.subject) : principal.subject;
  return lines.filter((l) => l.subject === me && !denied.has(l.toolset));
}
