/**
 * @module After a reload, each live session is placed on the instances the new config gives it: an upstream
 * that became per-session, got credentials, or changed spec never keeps serving a session the old way. A
 * session whose credentials the new config reads from headers it never saw cannot be placed: it is ended.
 */
import type { Catalog } from "../catalog/types.js";
import type { Logger } from "../log.js";
import type { Resolution } from "../resolve.js";
import type { Selection } from "../selection.js";
import type { InstanceRef } from "../upstream/instance.js";
import { credentialNames, refsOf } from "./instances.js";
import type { Session } from "./session.js";

export interface ReloadHost {
  readonly logger: Logger;
  readonly sessions: {
    has(s: Session): boolean;
    moved(s: Session, before: ReadonlyMap<string, InstanceRef>): void;
  };
  readonly pool: { acquire(ref: InstanceRef): unknown; release(ref: InstanceRef): void };
  refsAfterReload(session: Session): Map<string, InstanceRef> | undefined;
  resolve(selection: Selection, refs: ReadonlyMap<string, InstanceRef>): Promise<Resolution>;
  closeSession(session: Session): Promise<void>;
}

function sameRefs(a: ReadonlyMap<string, InstanceRef>, b: ReadonlyMap<string, InstanceRef>): boolean {
  if (a.size !== b.size) return false;
  for (const [u, ref] of a) if (b.get(u)?.id !== ref.id) return false;
  return true;
}

export async function placeAfterReload(host: ReloadHost, session: Session): Promise<void> {
  try {
    const next = host.refsAfterReload(session);
    if (!next) {
      host.logger.info(
        "session ended by a reload: the new config reads credentials it was not opened with, or changes what its identity may use",
        {
          session: session.digest,
        },
      );
      await host.closeSession(session);
      return;
    }
    const before = session.refs;
    if (sameRefs(before, next)) {
      const resolution = await host.resolve(session.selection, before);
      if (host.sessions.has(session)) session.update(resolution);
      return;
    }
    for (const ref of next.values()) host.pool.acquire(ref);
    let resolution: Resolution;
    try {
      resolution = await host.resolve(session.selection, next);
    } catch (err) {
      for (const ref of next.values()) host.pool.release(ref);
      throw err;
    }
    if (!host.sessions.has(session)) {
      for (const ref of next.values()) host.pool.release(ref);
      return;
    }
    session.update(resolution, next);
    host.sessions.moved(session, before);
    for (const ref of before.values()) host.pool.release(ref);
    host.logger.info("session moved to the instances of the new config", { session: session.digest });
  } catch (err) {
    host.logger.warn("a session could not be placed after a reload; ending it", {
      session: session.digest,
      error: (err as Error).message,
    });
    await host.closeSession(session);
  }
}

/**
 * The instances a live session gets under a new catalog, by the credential headers it was opened with;
 * undefined when the new catalog reads a header the session was never asked for (it cannot be placed).
 */
export function refsAfterReload(
  catalog: Catalog,
  upstreams: readonly string[],
  session: Pick<Session, "credentials" | "sessionKey">,
): Map<string, InstanceRef> | undefined {
  const { names, values, principal } = session.credentials;
  for (const u of upstreams) {
    const spec = catalog.upstreams.get(u);
    if (spec && credentialNames(spec).some((h) => !names.includes(h))) return undefined;
  }
  return refsOf(catalog, upstreams, values, session.sessionKey, principal);
}
