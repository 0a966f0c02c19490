/** @module The example config served for real: tools/list bytes per selection (start-up is in startup.js). */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { closePool, HttpSession } from "./http-client.js";
import { start, stop, waitForStderr } from "./proc.js";
import { cliPath, LISTENING } from "./targets.js";

/** The environment toolpacks runs in: upstream bins by name, as `npm start` would find them. */
export function serveEnv(root) {
  return { ...process.env, PATH: `${join(root, "node_modules/.bin")}:${process.env.PATH ?? ""}` };
}

/** Stops a served example and forgets its connections. */
export async function halt(served) {
  await closePool(served.url);
  await stop(served.child);
}

export async function serve(root, config) {
  const cli = cliPath(root);
  if (!existsSync(cli)) throw new Error(`not built (${cli} missing)`);
  const args = [cli, "serve", "--port", "0", "--host", "127.0.0.1", config];
  const child = start("node", args, { cwd: root, env: serveEnv(root) });
  try {
    const m = await waitForStderr(child, LISTENING);
    return { child, url: m[1] };
  } catch (err) {
    await stop(child);
    throw err;
  }
}

/** Same upstreams, no toolsets: every upstream tool exposed, which is what an all-in proxy would list. */
async function allToolsConfig(root, config, tmp) {
  const load = await import(pathToFileURL(join(root, "dist/config/load.js")).href);
  const loaded = load.loadTexts([{ file: config, text: readFileSync(config, "utf8") }], process.env);
  if (!loaded.ok) throw new Error(`example config: ${loaded.errors[0]?.message}`);
  const upstreams = {};
  for (const f of loaded.files) {
    for (const [name, spec] of Object.entries(f.raw.upstreams ?? {}))
      upstreams[name] = { cwd: root, ...spec };
  }
  const file = join(tmp, "all-tools.yaml");
  writeFileSync(file, JSON.stringify({ name: "all-tools", upstreams }));
  return file;
}

async function listBytes(url, query) {
  const s = await new HttpSession(url + query).initialize();
  try {
    const { result, bytes } = await s.listTools();
    return { tools: result.tools.length, bytes };
  } finally {
    s.close();
  }
}

/** tools/list bytes (and ≈tokens, bytes/4) for each selection, against every tool of the same upstreams. */
export async function selectionBytes(root, config, selections, tmp) {
  const all = await serve(root, await allToolsConfig(root, config, tmp));
  let reference;
  try {
    reference = await listBytes(all.url, "");
  } finally {
    await halt(all);
  }
  const ex = await serve(root, config);
  const rows = [];
  try {
    for (const { query, label } of selections) {
      const r = await listBytes(ex.url, query);
      rows.push({
        query: `/mcp${query}`,
        label,
        ...r,
        tokens: Math.round(r.bytes / 4),
        ofAll: r.bytes / reference.bytes,
      });
    }
  } finally {
    await halt(ex);
  }
  rows.push({
    query: "(no toolsets)",
    label: "every tool of every upstream",
    ...reference,
    tokens: Math.round(reference.bytes / 4),
    ofAll: 1,
  });
  return rows;
}
