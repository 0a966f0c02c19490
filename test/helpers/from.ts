/** Clients from other loopback addresses (127.0.0.2, …): per-client limits count them as different clients. */
import { Agent, fetch as undiciFetch } from "undici";
import type { Fetch } from "./wire.js";

const agents = new Map<string, Agent>();

/** A fetch whose connections come from `address` (any 127.x.y.z on Linux). */
export function fetchFrom(address: string): Fetch {
  let agent = agents.get(address);
  if (!agent) {
    agent = new Agent({ localAddress: address, connections: 64 });
    agents.set(address, agent);
  }
  const dispatcher = agent;
  return (input, init) =>
    undiciFetch(input, {
      ...(init as Parameters<typeof undiciFetch>[1]),
      dispatcher,
    }) as unknown as Promise<Response>;
}

export async function closeAgents(): Promise<void> {
  await Promise.all([...agents.values()].map((a) => a.close()));
  agents.clear();
}
