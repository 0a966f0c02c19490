/**
 * @module The private folder and id of an upstream instance (`${instance.dir}`, `${instance.id}`): a
 * per-credential instance keeps its folder under the state directory across restarts; a per-session (or
 * shared) one gets a temporary 0700 folder that is removed when the instance closes.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import type { Catalog, Upstream } from "../catalog/types.js";
import type { InstanceRef } from "./instance.js";

export interface InstanceValues {
  readonly dir: string;
  readonly id: string;
}

const USES = /\$\{instance\.(dir|id)\}/;

/** True when the upstream's env, args or cwd name a per-instance value. */
export function usesInstanceValues(spec: Upstream): boolean {
  return (
    USES.test(spec.cwd) ||
    spec.args.some((a) => USES.test(a)) ||
    Object.values(spec.env).some((v) => USES.test(v))
  );
}

/** `${instance.dir}` and `${instance.id}` filled in. */
export function fillInstanceValues(text: string, values: InstanceValues): string {
  return text.replace(/\$\{instance\.(dir|id)\}/g, (_m, k: string) => (k === "dir" ? values.dir : values.id));
}

export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_DATA_HOME;
  if (xdg?.startsWith("/")) return join(xdg, "toolpacks");
  return join(env.HOME || homedir(), ".local", "share", "toolpacks");
}

export class InstanceDirs {
  /** Temporary folders made for instances, removed when they close. */
  private readonly temporary = new Map<string, string>();

  /** The instance's values, making its folder on first use; undefined when its spec uses none. */
  values(ref: InstanceRef, spec: Upstream, catalog: Catalog): InstanceValues | undefined {
    if (!usesInstanceValues(spec)) return undefined;
    if (ref.kind === "credential") {
      const stateDir = (catalog as { stateDir?: string }).stateDir ?? defaultStateDir();
      const dir = join(stateDir, "instances", ref.upstream, ref.key);
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      chmodSync(dir, 0o700);
      return { dir, id: ref.key };
    }
    let dir = this.temporary.get(ref.id);
    if (!dir) {
      dir = mkdtempSync(join(tmpdir(), `toolpacks-${ref.upstream}-`));
      this.temporary.set(ref.id, dir);
    }
    return { dir, id: ref.key };
  }

  /** Removes a temporary folder of a closed instance (a per-credential folder stays). */
  async release(ref: InstanceRef): Promise<void> {
    const dir = this.temporary.get(ref.id);
    if (!dir) return;
    this.temporary.delete(ref.id);
    rmSync(dir, { recursive: true, force: true });
  }
}
