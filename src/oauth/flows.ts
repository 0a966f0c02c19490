/**
 * @module Authorizations in progress: a link starts one flow (opening it again finds that flow, whoever opens
 * it and however often), and flows are bounded per owner (who started them) and in total, per process.
 */
import { randomBytes } from "node:crypto";
import { sha256Hex } from "./authorize.js";
import { OAuthFlowError } from "./errors.js";
import type { CredentialRecords } from "./store/records.js";
import type { PendingRecord } from "./types.js";

/** Flows one owner may have in progress; a newer one pushes out its oldest. */
const MAX_FLOWS_PER_OWNER = 5;
/** Flows in progress in all; past it a new owner's start is refused until one ends or expires. */
const MAX_FLOWS = 1_000;

export interface FlowLimits {
  readonly perOwner: number;
  readonly total: number;
}

/** What a start page needs: where to send the browser, and the nonce its binding cookie carries. */
export interface OpenedFlow {
  readonly url: string;
  readonly nonce: string;
}

/** A flow made but not stored yet (startAuthorization's result). */
export interface NewFlow {
  readonly url: string;
  readonly state: string;
  readonly pending: PendingRecord;
}

type Entry = { readonly state: string; readonly expires: number };

export class FlowsInProgress {
  readonly #opening = new Map<string, Promise<OpenedFlow>>();
  /** One open at a time per owner, so that its bound holds while a flow is being made. */
  readonly #queues = new Map<string, Promise<unknown>>();
  /** owner → link → its flow, oldest first. */
  readonly #owners = new Map<string, Map<string, Entry>>();
  #total = 0;

  constructor(
    private readonly records: CredentialRecords,
    private readonly now: () => number,
    private readonly limits: FlowLimits = { perOwner: MAX_FLOWS_PER_OWNER, total: MAX_FLOWS },
  ) {}

  get size(): number {
    return this.#total;
  }

  /**
   * The flow of `link` (any string naming the link; only its digest is kept): the one it started while that may
   * still be finished, else a new one made by `create` with a fresh binding nonce. Concurrent opens share one.
   */
  open(link: string, owner: string, create: (nonce: string) => Promise<NewFlow>): Promise<OpenedFlow> {
    const id = sha256Hex(`toolpacks link\0${link}`);
    let p = this.#opening.get(id);
    if (!p) {
      const before = this.#queues.get(owner) ?? Promise.resolve();
      const run = before.then(() => this.#open(id, owner, create));
      const tail = run.catch(() => {});
      this.#queues.set(owner, tail);
      void tail.then(() => {
        if (this.#queues.get(owner) === tail) this.#queues.delete(owner);
      });
      p = run.finally(() => this.#opening.delete(id));
      this.#opening.set(id, p);
    }
    return p;
  }

  async #open(id: string, owner: string, create: (nonce: string) => Promise<NewFlow>): Promise<OpenedFlow> {
    const now = this.now();
    const known = await this.records.link(id);
    if (known && known.expires_at > now) return { url: known.url, nonce: known.nonce };
    this.#prune(now);
    const mine = this.#owners.get(owner) ?? new Map<string, Entry>();
    // Checked before anything is asked of the authorization server: a refused start costs it nothing.
    if (mine.size >= this.limits.perOwner) await this.#drop(owner, mine, mine.keys().next().value!);
    else if (this.#total >= this.limits.total)
      throw new OAuthFlowError(
        "busy",
        "too many authorizations are in progress on this server: try again in a few minutes",
      );
    // Counted before the flow is made (other owners' opens run meanwhile), given back if making it fails.
    this.#total++;
    const nonce = randomBytes(24).toString("base64url");
    try {
      const flow = await create(nonce);
      const pending: PendingRecord = { ...flow.pending, link: id };
      const entry: Entry = { state: sha256Hex(flow.state), expires: pending.expires_at };
      await this.records.putPending(flow.state, pending);
      await this.records.putLink(id, { url: flow.url, nonce, state: entry.state, expires_at: entry.expires });
      mine.set(id, entry);
      this.#owners.set(owner, mine);
      return { url: flow.url, nonce };
    } catch (err) {
      this.#total--;
      throw err;
    }
  }

  /** A flow was taken at its callback, whatever came of it: its link may start a new one. */
  async settled(pending: PendingRecord, owner: string): Promise<void> {
    if (!pending.link) return;
    await this.records.deleteLink(pending.link);
    const mine = this.#owners.get(owner);
    if (mine?.delete(pending.link)) {
      this.#total--;
      if (!mine.size) this.#owners.delete(owner);
    }
  }

  async #drop(owner: string, mine: Map<string, Entry>, link: string): Promise<void> {
    const e = mine.get(link)!;
    mine.delete(link);
    this.#total--;
    if (!mine.size) this.#owners.delete(owner);
    await this.records.deletePending(e.state);
    await this.records.deleteLink(link);
  }

  /** Forgets flows past their expiry (the store drops their records itself). */
  #prune(now: number): void {
    for (const [owner, mine] of this.#owners) {
      for (const [link, e] of mine)
        if (e.expires <= now) {
          mine.delete(link);
          this.#total--;
        }
      if (!mine.size) this.#owners.delete(owner);
    }
  }
}
