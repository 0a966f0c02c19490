/** @module `init --live`: connect to each upstream and list what it offers, never showing a secret value. */
import { compileTexts } from "../../catalog/load.js";
import { formatConfigError } from "../../config/errors.js";
import { silentLogger } from "../../log.js";
import { VERSION } from "../../version.js";
import { LiveProgress } from "../progress.js";
import { renderPacks } from "./render.js";
import { oneLine } from "./text.js";
import type { InitPlan, Listing, UpstreamPlan, Variable } from "./types.js";

/** Secret values in a message (a child's stderr, an error) replaced by their variable's reference. */
export function mask(text: string, variables: ReadonlyMap<string, Variable>): string {
  let out = text;
  // Longest first: a value that holds another is replaced whole.
  const values = [...variables.values()].sort((a, b) => (b.value?.length ?? 0) - (a.value?.length ?? 0));
  for (const v of values) {
    if (v.value && v.value.length >= 3) out = out.split(v.value).join(`\${${v.name}}`);
  }
  return out;
}

export async function listLive(
  plan: InitPlan,
  file: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Map<string, Listing>> {
  const result = new Map<string, Listing>();
  const known: Record<string, string> = {};
  for (const v of plan.variables.values()) if (v.value !== undefined) known[v.name] = v.value;
  const reachable: UpstreamPlan[] = [];
  for (const u of plan.upstreams) {
    const unset = u.needs.filter((n) => known[n] === undefined && !env[n]);
    if (unset.length) {
      result.set(u.name, { ok: false, reason: `environment variable ${unset.join(", ")} not set` });
    } else reachable.push(u);
  }
  if (!reachable.length) return result;
  const text = renderPacks({ ...plan, upstreams: reachable, skipped: [] });
  const compiled = compileTexts([{ file, text }], { ...env, ...known });
  if (!compiled.ok) {
    throw new Error(
      `cannot read the upstreams back: ${compiled.errors.map((e) => mask(formatConfigError(e), plan.variables)).join("; ")}`,
    );
  }
  const [{ UpstreamPool }, { closeAgent }] = await Promise.all([
    import("../../upstream/pool.js"),
    import("../../upstream/transport.js"),
  ]);
  const pool = new UpstreamPool(compiled.catalog, {
    clientName: "toolpacks-init",
    clientVersion: VERSION,
    logger: silentLogger,
  });
  const progress = new LiveProgress(reachable.map((u) => u.name));
  progress.start();
  try {
    await Promise.all(
      reachable.map(async (u) => {
        const state = (await pool.ensure([u.name])).get(u.name);
        if (state?.status === "ready") {
          result.set(u.name, {
            ok: true,
            tools: state.tools,
            prompts: state.prompts as { name: string; title?: string; description?: string }[],
            resources: state.resources.length,
            templates: state.templates.length,
          });
          progress.answered(u.name, `${state.tools.length} tool(s)`);
        } else {
          const reason = oneLine(mask(state?.reason ?? "not started", plan.variables), 300);
          result.set(u.name, { ok: false, reason });
          progress.answered(u.name, `not reached: ${reason}`);
        }
      }),
    );
    progress.end();
  } finally {
    await pool.close();
    await closeAgent();
  }
  return result;
}
