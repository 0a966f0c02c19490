/** @module Typed credentials over a TokenStore: client registrations by issuer, grants by (upstream, principal), flows by state. */
import { sha256Hex } from "../authorize.js";
import type { ClientRecord, GrantRecord, LinkRecord, PendingRecord, TokenStore } from "../types.js";

const key = (...parts: string[]) => JSON.stringify(parts);

function parse<T>(text: string | undefined, check: (v: Record<string, unknown>) => boolean): T | undefined {
  if (text === undefined) return undefined;
  try {
    const v: unknown = JSON.parse(text);
    return v && typeof v === "object" && check(v as Record<string, unknown>) ? (v as T) : undefined;
  } catch {
    return undefined;
  }
}

const str = (v: unknown) => typeof v === "string";

export class CredentialRecords {
  constructor(private readonly store: TokenStore) {}

  /** A registration made with `issuer` for one redirect URI slot; never looked up for another issuer. */
  async client(issuer: string, slot: string): Promise<ClientRecord | undefined> {
    return parse<ClientRecord>(
      await this.store.get(key("client", issuer, slot)),
      (v) => v.issuer === issuer && str(v.client_id) && str(v.token_endpoint_auth_method),
    );
  }
  async putClient(slot: string, record: ClientRecord): Promise<void> {
    await this.store.put(key("client", record.issuer, slot), JSON.stringify(record));
  }
  async deleteClient(issuer: string, slot: string): Promise<void> {
    await this.store.delete(key("client", issuer, slot));
  }

  async grant(upstream: string, principal: string): Promise<GrantRecord | undefined> {
    return parse<GrantRecord>(
      await this.store.get(key("grant", upstream, principal)),
      (v) => str(v.issuer) && str(v.access_token) && str(v.token_endpoint) && !!v.client && str(v.resource),
    );
  }
  /** One write of access and refresh token together: a rotated refresh token never exists apart from its pair. */
  async putGrant(upstream: string, principal: string, record: GrantRecord): Promise<void> {
    await this.store.put(key("grant", upstream, principal), JSON.stringify(record));
  }
  async deleteGrant(upstream: string, principal: string): Promise<void> {
    await this.store.delete(key("grant", upstream, principal));
  }

  /** Stored under a digest of the state, so the state itself is not a store key. */
  async putPending(state: string, record: PendingRecord): Promise<void> {
    await this.store.put(key("pending", sha256Hex(state)), JSON.stringify(record), {
      expiresAt: record.expires_at,
    });
  }
  /** Drops a flow by the digest of its state (a flow pushed out by the bounds on flows in progress). */
  async deletePending(stateDigest: string): Promise<void> {
    await this.store.delete(key("pending", stateDigest));
  }

  /** The flow a link (by its digest) started, while it may still be finished. */
  async link(link: string): Promise<LinkRecord | undefined> {
    return parse<LinkRecord>(
      await this.store.get(key("link", link)),
      (v) => str(v.url) && str(v.nonce) && str(v.state) && typeof v.expires_at === "number",
    );
  }
  async putLink(link: string, record: LinkRecord): Promise<void> {
    await this.store.put(key("link", link), JSON.stringify(record), { expiresAt: record.expires_at });
  }
  async deleteLink(link: string): Promise<void> {
    await this.store.delete(key("link", link));
  }
  /** Reads and deletes: a state is redeemed once, whatever happens next. */
  async takePending(state: string): Promise<PendingRecord | undefined> {
    const k = key("pending", sha256Hex(state));
    const text = await this.store.get(k);
    if (text === undefined) return undefined;
    await this.store.delete(k);
    return parse<PendingRecord>(text, (v) => str(v.issuer) && str(v.code_verifier) && str(v.upstream));
  }
}
