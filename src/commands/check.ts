/** @module `toolpacks check`: a one-screen summary of a valid config; with `--live`, drift against the real upstreams. */
import type { Command } from "commander";
import { requiresText } from "../access.js";
import type { Inventory, UpstreamState } from "../catalog/inventory.js";
import { memberMatches } from "../catalog/members.js";
import type { Catalog, Member, Upstream } from "../catalog/types.js";
import { entryOf } from "../clients/report.js";
import { redact } from "../config/env.js";
import { everythingSelection } from "../report.js";
import { resolve } from "../resolve.js";
import { liveNameWarnings, staticNameWarnings } from "./check-names.js";
import { catalogOrExit } from "./common.js";
import { finish, keysOf, undeclaredCapabilities, withLive } from "./live.js";

function describeUpstream(u: Upstream): string {
  const d = u.display;
  const oauth = u.oauth
    ? `  (oauth ${u.oauth.mode}${u.oauth.grant === "client_credentials" ? ", client credentials" : ""})`
    : "";
  if (u.transport === "http") return `http   ${d.url ?? ""}${oauth}`;
  return `stdio  ${[d.command ?? "", ...(d.args ?? [])].join(" ")}`;
}

function checkSummary(catalog: Catalog, files: readonly string[]): string {
  const lines: string[] = [];
  const ups = [...catalog.upstreams.values()];
  lines.push(`ok: ${files.join(", ")}: ${ups.length} upstream(s), ${catalog.toolsets.length} toolset(s)`);
  lines.push("", "upstreams:");
  const w = Math.max(4, ...ups.map((u) => u.name.length));
  for (const u of ups)
    lines.push(`  ${u.name.padEnd(w)}  ${describeUpstream(u)}${u.prefix ? `  (prefix ${u.prefix})` : ""}`);
  lines.push("", "toolsets:");
  const tw = Math.max(4, ...catalog.toolsets.map((t) => t.name.length));
  for (const t of catalog.toolsets) {
    const flags = [
      t.default ? "default" : "opt-in",
      ...(t.always ? ["always"] : []),
      ...(t.implicit ? ["implicit"] : []),
      ...(t.requires ? [requiresText(t.requires)] : []),
    ];
    const members = t.members.map((m) => (m.as ? `${m.ref} as ${m.as}` : m.ref));
    lines.push(`  ${t.name.padEnd(tw)}  ${flags.join(", ").padEnd(24)}  ${members.join(", ")}`);
  }
  lines.push(...identitySummary(catalog), ...clientsSummary(catalog));
  const warnings = [...(catalog.warnings ?? []), ...staticNameWarnings(catalog)];
  if (warnings.length) lines.push("", "warnings:", ...warnings.map((w) => `  ${w}`));
  return lines.join("\n");
}

/** The client profiles in the order they are tried: what each matches, what it sets, where it comes from. */
function clientsSummary(catalog: Catalog): string[] {
  if (!catalog.clients.length) return [];
  const rows = catalog.clients.map((p) => {
    const e = entryOf(p);
    const match = [e.client.join(", "), ...(e.version ? [`version ${e.version}`] : [])].join(" ");
    const sets = [
      ...(e.max_tools !== undefined ? [`max_tools ${e.max_tools}`] : []),
      ...(e.max_list_bytes !== undefined ? [`max_list_bytes ${e.max_list_bytes}`] : []),
      `defer ${e.defer}`,
      ...(e.max_description_bytes !== undefined ? [`max_description_bytes ${e.max_description_bytes}`] : []),
      ...(e.selection !== undefined ? [`selection ${e.selection}`] : []),
    ].join(", ");
    return [match, sets, e.from];
  });
  const w0 = Math.max(...rows.map((r) => r[0]!.length));
  const w1 = Math.max(...rows.map((r) => r[1]!.length));
  return [
    "",
    "clients (the first profile that matches a client wins):",
    ...rows.map((r) => `  ${r[0]!.padEnd(w0)}  ${r[1]!.padEnd(w1)}  ${r[2]}`),
  ];
}

/** Who may connect and where calls are audited; values from the environment shown as their `${VAR}`. */
function identitySummary(catalog: Catalog): string[] {
  const { auth, audit } = catalog;
  const shown = (s: string) => redact(s, catalog.secrets);
  const lines: string[] = [];
  if (auth?.tokens?.length) lines.push(`  static bearer tokens: ${auth.tokens.length}`);
  const o = auth?.oauth;
  if (o) {
    lines.push(`  OAuth resource server: issuer ${shown(o.issuer)}, audience ${shown(o.audience)}`);
    if (o.step_up) lines.push("  step-up: a URL naming a toolset whose scopes the token lacks gets 403");
  }
  if (audit.sink) lines.push(`  audit log: ${"file" in audit.sink ? shown(audit.sink.file) : "stderr"}`);
  if (audit.subject === "digest") lines.push("  subjects written as digests");
  return lines.length ? ["", "identity:", ...lines] : [];
}

/** What the upstreams list now, against what the config names. */
interface Drift {
  /** Members that match nothing on their (reachable) upstream: a renamed or removed upstream tool. */
  readonly missing: readonly {
    toolset: string;
    toolsetWhere: string;
    member: Member;
    /** Client capabilities its upstream lists it to (which `--live` and sessions do not declare to it). */
    needs?: readonly string[];
  }[];
  /** Tools on covered upstreams that no member of any toolset names (they can never be exposed). */
  readonly unclaimed: readonly { upstream: string; tools: readonly string[] }[];
  /** Upstreams that could not be started, initialized or listed. */
  readonly unreachable: readonly { upstream: string; where: string; reason: string }[];
  /** Exposed names two toolsets' globs now give to different upstream tools (§4 conflict). */
  readonly conflicts: readonly { toolset: string; detail: string }[];
  /** Tools a glob exposes as find_tools or call_tool in a listed toolset (exact members: the static summary). */
  readonly shadowing: readonly string[];
}

/**
 * Pure: compares the catalog with an inventory of every upstream. `probed`: what some upstreams list to a
 * client that declares every capability, so that a member they list only to such clients says so.
 */
function driftOf(catalog: Catalog, inventory: Inventory, probed: Inventory = new Map()): Drift {
  const missing: Drift["missing"][number][] = [];
  const matches = (m: Member, state: UpstreamState | undefined) =>
    state?.status === "ready" && keysOf(state, m.kind).some((k) => memberMatches(m, k));
  for (const t of catalog.toolsets) {
    for (const m of t.members) {
      const state = inventory.get(m.upstream);
      if (!m.required || state?.status !== "ready" || matches(m, state)) continue;
      const needs = matches(m, probed.get(m.upstream))
        ? undeclaredCapabilities(catalog.upstreams.get(m.upstream)!)
        : [];
      missing.push({ toolset: t.name, toolsetWhere: t.where, member: m, ...(needs.length ? { needs } : {}) });
    }
  }
  const members = catalog.toolsets.flatMap((t) => t.members).filter((m) => m.kind === "tool");
  const unclaimed: Drift["unclaimed"][number][] = [];
  for (const u of catalog.upstreams.values()) {
    const state = inventory.get(u.name);
    if (!u.covered || state?.status !== "ready") continue;
    const mine = members.filter((m) => m.upstream === u.name);
    const tools = keysOf(state, "tool").filter((name) => !mine.some((m) => memberMatches(m, name)));
    if (tools.length) unclaimed.push({ upstream: u.name, tools });
  }
  const unreachable: Drift["unreachable"][number][] = [];
  for (const u of catalog.upstreams.values()) {
    const state = inventory.get(u.name);
    if (state?.status !== "ready")
      unreachable.push({
        upstream: u.name,
        where: u.where,
        reason: state?.status === "unavailable" ? state.reason : "not started",
      });
  }
  const everything = resolve(catalog, everythingSelection(catalog), inventory);
  const conflicts = everything.unavailable
    .filter((u) => u.reason === "conflict")
    .map((u) => ({ toolset: u.name, detail: u.detail }));
  return { missing, unclaimed, unreachable, conflicts, shadowing: liveNameWarnings(catalog, everything) };
}

/** The report `check --live` prints after the static summary, and whether it fails. */
function driftReport(
  drift: Drift,
  upstreams: number,
  allowMissing: boolean,
): { text: string; fail: boolean } {
  const lines: string[] = [
    "",
    `live: ${upstreams - drift.unreachable.length} of ${upstreams} upstream(s) reached`,
  ];
  if (drift.unreachable.length) {
    lines.push("", "unreachable upstreams:");
    for (const u of drift.unreachable)
      lines.push(`  ${u.where}: upstream ${u.upstream} cannot be reached: ${u.reason}`);
  }
  if (drift.missing.length) {
    lines.push("", "members that match nothing now (renamed or removed upstream tools?):");
    for (const m of drift.missing)
      lines.push(
        `  ${m.member.where}: ${m.member.ref} in toolset ${m.toolset} (at ${m.toolsetWhere}) matches nothing on ${m.member.upstream}${
          m.needs
            ? `: ${m.member.upstream} lists it only to clients that declare ${m.needs.join(", ")}, which toolpacks declares to this upstream only with roots: in its config or isolation: per-session`
            : ""
        }`,
      );
  }
  if (drift.unclaimed.length) {
    lines.push("", "tools no toolset claims (on upstreams a toolset mentions, so never exposed):");
    for (const u of drift.unclaimed) lines.push(`  ${u.upstream}: ${u.tools.join(", ")}`);
  }
  if (drift.conflicts.length) {
    lines.push("", "conflicts (with every toolset on):");
    for (const c of drift.conflicts) lines.push(`  ${c.toolset}: ${c.detail}`);
  }
  if (drift.shadowing.length) lines.push("", "warnings:", ...drift.shadowing.map((w) => `  ${w}`));
  const problems = drift.missing.length + drift.unreachable.length;
  const fail = problems > 0 && !allowMissing;
  const counts = [
    `${drift.missing.length} missing member(s)`,
    `${drift.unreachable.length} unreachable upstream(s)`,
    `${drift.unclaimed.reduce((n, u) => n + u.tools.length, 0)} unclaimed tool(s)`,
    ...(drift.conflicts.length ? [`${drift.conflicts.length} conflict(s)`] : []),
  ].join(", ");
  lines.push("", `${fail ? "FAIL" : problems ? "ok (--allow-missing)" : "ok"}: ${counts}`);
  return { text: lines.join("\n"), fail };
}

export function registerCheck(program: Command): void {
  program
    .command("check")
    .description("validate config files and print a summary (exit 1 with every error)")
    .argument("<config...>", "packs.yaml files; toolsets of the same name merge")
    .option(
      "--live",
      "also connect to every upstream: members that match nothing now, tools no toolset claims, unreachable upstreams",
    )
    .option("--allow-missing", "with --live: report missing members and unreachable upstreams, but exit 0")
    .action(async (files: string[], opts: { live?: boolean; allowMissing?: boolean }) => {
      const catalog = catalogOrExit(files);
      // With --live, at once: what the upstreams say follows (stdout is what it would be in one piece).
      process.stdout.write(`${checkSummary(catalog, files)}\n`);
      if (!opts.live) return;
      const drift = await withLive(catalog, async ({ inventory, refresh, probe }) => {
        const first = driftOf(catalog, inventory);
        // Refresh, then recheck (as serving does): a stale list must not report a member missing.
        const stale = [...new Set(first.missing.map((m) => m.member.upstream))];
        if (!stale.length) return first;
        const fresh = new Map(inventory);
        for (const u of stale) fresh.set(u, await refresh(u));
        const second = driftOf(catalog, fresh);
        // An upstream may list a tool only to clients with a capability its sessions' instance lacks: ask it as one.
        const probed = new Map<string, UpstreamState>();
        for (const u of new Set(second.missing.map((m) => m.member.upstream))) {
          if (undeclaredCapabilities(catalog.upstreams.get(u)!).length) probed.set(u, await probe(u));
        }
        return probed.size ? driftOf(catalog, fresh, probed) : second;
      });
      const { text, fail } = driftReport(drift, catalog.upstreams.size, opts.allowMissing === true);
      await finish(`${text}\n`, fail ? 1 : 0);
    });
}
