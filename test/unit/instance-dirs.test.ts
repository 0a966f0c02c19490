/**
 * A per-session upstream instance's folder (`${instance.dir}`) belongs to its session, not to the process that
 * uses it: the real pool with real SDK servers in process (no process spawned), the folders on a real disk.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, test } from "vitest";
import { silentLogger } from "../../src/log.js";
import { sessionRef } from "../../src/upstream/instance.js";
import { UpstreamPool } from "../../src/upstream/pool.js";
import { catalogOf, inMemoryUpstreams } from "../helpers/in-process.js";

const made: string[] = [];
const pools: UpstreamPool[] = [];
afterEach(async () => {
  for (const p of pools.splice(0)) await p.close();
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A per-session upstream whose env names its folder; `extra` changes its spec (a reload restarts it). */
const yaml = (stateDir: string, extra = "") => `
state_dir: ${JSON.stringify(stateDir)}
upstreams:
  notes:
    command: in-process
    isolation: per-session
    env: { NOTES: "\${instance.dir}/notes.jsonl"${extra} }
toolsets:
  notes: { tools: [notes/echo] }
`;

function pool() {
  const stateDir = mkdtempSync(join(tmpdir(), "toolpacks-dirs-"));
  made.push(stateDir);
  const make = inMemoryUpstreams();
  const p = new UpstreamPool(
    catalogOf(yaml(stateDir)),
    { clientName: "toolpacks", clientVersion: "0", logger: silentLogger, transport: () => make().ours },
    {},
  );
  pools.push(p);
  const folders = () => {
    const parent = join(stateDir, "sessions");
    return existsSync(parent) ? readdirSync(parent).map((n) => join(parent, n)) : [];
  };
  return { pool: p, stateDir, folders };
}

test("a per-session instance's folder outlives every end of its instance while its session lives, and goes with the session", async () => {
  const { pool: p, stateDir, folders } = pool();
  const ref = sessionRef("notes", "a session of alice");
  const refs = new Map([["notes", ref]]);
  p.acquire(ref);
  await p.ensure(["notes"], refs);
  expect(folders()).toHaveLength(1);
  const dir = folders()[0]!;
  writeFileSync(join(dir, "notes.jsonl"), "alice's notes\n");

  // A reload that changes the upstream ends its instance; the session lives on and restarts it.
  await p.setCatalog(catalogOf(yaml(stateDir, ', MORE: "1"')));
  expect(p.existing(ref)).toBeUndefined();
  expect(readFileSync(join(dir, "notes.jsonl"), "utf8")).toBe("alice's notes\n");
  await p.ensure(["notes"], refs);
  expect(folders()).toEqual([dir]);

  // Its slot closed at once (whoever holds it): the folder is still the session's.
  await p.closeNow(ref);
  expect(readFileSync(join(dir, "notes.jsonl"), "utf8")).toBe("alice's notes\n");
  await p.ensure(["notes"], refs);
  expect(folders()).toEqual([dir]);

  // The session ends: its folder goes.
  p.release(ref);
  await expect.poll(() => existsSync(dir)).toBe(false);
});

test("a session that ends while its instance is down takes its folder with it; closing the pool leaves none", async () => {
  const { pool: p, folders } = pool();
  const gone = sessionRef("notes", "a session that ends");
  const kept = sessionRef("notes", "a session open at shutdown");
  for (const ref of [gone, kept]) {
    p.acquire(ref);
    await p.ensure(["notes"], new Map([["notes", ref]]));
  }
  expect(folders()).toHaveLength(2);
  await p.closeNow(gone);
  expect(folders()).toHaveLength(2);
  p.release(gone);
  await expect.poll(() => folders().length).toBe(1);
  await p.close();
  expect(folders()).toEqual([]);
});
