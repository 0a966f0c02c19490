/**
 * @module Tickets: the authorization URL toolpacks hands to a principal carries one, so that the browser that
 * opens it (which has no bearer token) starts the flow for that principal and upstream only. Sealed with
 * AES-256-GCM under a key derived from TOOLPACKS_TOKEN_KEY (replicas that share the key share tickets), short
 * lived, and dead once the principal has authorized after it was issued.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import { OAuthFlowError } from "./errors.js";
import type { CredentialRecords } from "./store/records.js";

/** How long a handed-out authorization URL may be used. */
const TICKET_TTL_MS = 30 * 60_000;

interface Payload {
  /** upstream */
  readonly u: string;
  /** principal ("" for a shared upstream) */
  readonly p: string;
  /** issued, epoch ms */
  readonly i: number;
}

export interface TicketContents {
  readonly principal: string;
  readonly issuedAt: number;
}

export class Tickets {
  readonly #key: Buffer;

  /** `secret`: the token store's key (32 bytes); without one, a random key (tickets of this process only). */
  constructor(
    secret: Buffer | undefined,
    private readonly now: () => number = Date.now,
  ) {
    const ikm = secret ?? randomBytes(32);
    this.#key = Buffer.from(hkdfSync("sha256", ikm, Buffer.alloc(0), "toolpacks oauth ticket", 32));
  }

  issue(upstream: string, principal: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.#key, iv).setAAD(Buffer.from(upstream));
    const plain = JSON.stringify({ u: upstream, p: principal, i: this.now() } satisfies Payload);
    const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url");
  }

  /** The principal a ticket stands for, for this upstream; undefined when forged, altered, foreign or expired. */
  open(ticket: string, upstream: string): TicketContents | undefined {
    if (!/^[A-Za-z0-9_-]{40,2048}$/.test(ticket)) return undefined;
    const data = Buffer.from(ticket, "base64url");
    try {
      const decipher = createDecipheriv("aes-256-gcm", this.#key, data.subarray(0, 12)).setAAD(
        Buffer.from(upstream),
      );
      decipher.setAuthTag(data.subarray(12, 28));
      const plain = Buffer.concat([decipher.update(data.subarray(28)), decipher.final()]).toString("utf8");
      const p = JSON.parse(plain) as Payload;
      if (p.u !== upstream || typeof p.p !== "string" || typeof p.i !== "number") return undefined;
      const age = this.now() - p.i;
      if (age < -60_000 || age > TICKET_TTL_MS) return undefined;
      return { principal: p.p, issuedAt: p.i };
    } catch {
      return undefined;
    }
  }
}

/**
 * The principal a start URL's ticket stands for. Refused when forged, expired, for another upstream, or used up:
 * the principal has authorized since it was issued (a leaked link cannot re-bind someone's account afterwards).
 */
export async function ticketPrincipal(
  tickets: Tickets | undefined,
  records: CredentialRecords,
  upstream: string,
  ticket: string,
): Promise<string> {
  const t = tickets?.open(ticket, upstream);
  if (!t)
    throw new OAuthFlowError(
      "principal",
      "this authorization link is not valid or has expired: use the tool again for a new one",
    );
  const grant = await records.grant(upstream, t.principal);
  if (grant && grant.obtained_at >= t.issuedAt)
    throw new OAuthFlowError("principal", `upstream ${upstream} was authorized since this link was issued`);
  return t.principal;
}
