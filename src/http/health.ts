/** @module GET /healthz (the process answers) and GET /readyz (it can serve everything: its state store is up). */
import type { ServerResponse } from "node:http";
import type { StateStore } from "../state/types.js";
import { sendJson } from "./replies.js";

/** Always 200 while the process runs; says whether the state store is reachable. */
export function sendHealth(res: ServerResponse, name: string, sessions: number, state: StateStore): void {
  sendJson(res, 200, { ok: true, name, sessions, store: state.health() });
}

/** 200 when the state store is up, else 503: a load balancer or Kubernetes sends no traffic until it is. */
export function sendReady(res: ServerResponse, state: StateStore): void {
  const store = state.health();
  const ready = store === "up";
  sendJson(
    res,
    ready ? 200 : 503,
    { ready, store, ...(ready ? {} : { reason: `state store ${state.description} is unavailable` }) },
    { "cache-control": "no-store" },
  );
}
