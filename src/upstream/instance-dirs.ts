/**
 * @module The private folder and id of an upstream instance (`${instance.dir}`, `${instance.id}`), all 0700
 * under the state directory: a per-credential instance keeps `instances/UPSTREAM/DIGEST` across restarts; a
 * per-session one gets a new `sessions/UPSTREAM-XXXXXX` for as long as its session lives (whatever restarts
 * its process), a shared one for as long as it runs.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Catalog, Upstream } from "../catalog/types.js";
import { type InstanceValues, usesInstanceVars } from "../config/instance-vars.js";
import type { InstanceRef } from "./instance.js";

export class InstanceDirs {
  /** Temporary folders made for instances, removed when they close. */
  private readonly temporary = new Map<string, string>();

  /** The instance's values, making its folder on first use; undefined when its spec uses none. */
  values(ref: InstanceRef, spec: Upstream, catalog: Catalog): InstanceValues | undefined {
    if (spec.transport !== "stdio" || !usesInstanceVars(spec)) return undefined;
    if (ref.kind === "credential") {
      const dir = join(catalog.stateDir, "instances", ref.upstream, ref.key);
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      chmodSync(dir, 0o700);
      return { dir, id: ref.key };
    }
    let dir = this.temporary.get(ref.id);
    if (!dir) {
      const parent = join(catalog.stateDir, "sessions");
      mkdirSync(parent, { recursive: true, mode: 0o700 });
      dir = mkdtempSync(join(parent, `${ref.upstream}-`));
      this.temporary.set(ref.id, dir);
    }
    return { dir, id: ref.key };
  }

  /** Removes the temporary folder of an instance that is over (a per-credential folder stays). */
  async release(ref: InstanceRef): Promise<void> {
    const dir = this.temporary.get(ref.id);
    if (!dir) return;
    this.temporary.delete(ref.id);
    rmSync(dir, { recursive: true, force: true });
  }

  /** Removes every temporary folder (the pool is closed: no instance or session is left). */
  releaseAll(): void {
    for (const dir of this.temporary.values()) rmSync(dir, { recursive: true, force: true });
    this.temporary.clear();
  }
}
