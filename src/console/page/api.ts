/**
 * @module The console's data, from its own JSON routes (relative to the page, so a proxy's prefix is kept). A
 * bearer token, when the server asks for one, is kept in this tab's sessionStorage only and sent as a header;
 * the page never shows it.
 */
import type { ConsolePayload, LivePayload } from "../wire.js";

const TOKEN = "toolpacks-console-token";

export type Got<T> = { ok: true; data: T } | { ok: false; status: number; error: string };

export function storedToken(): string | null {
  try {
    return sessionStorage.getItem(TOKEN);
  } catch {
    return null;
  }
}

export function keepToken(token: string): void {
  sessionStorage.setItem(TOKEN, token);
}

export function forgetToken(): void {
  sessionStorage.removeItem(TOKEN);
}

async function get<T>(path: string): Promise<Got<T>> {
  const token = storedToken();
  let res: Response;
  try {
    res = await fetch(path, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
      cache: "no-store",
      credentials: "omit",
    });
  } catch (err) {
    return { ok: false, status: 0, error: `toolpacks cannot be reached (${(err as Error).message})` };
  }
  let body: unknown;
  try {
    body = await res.json();
  } catch {
    body = undefined;
  }
  if (res.ok) return { ok: true, data: body as T };
  const e = (body as { error?: unknown } | undefined)?.error;
  const error =
    typeof e === "string"
      ? e
      : typeof (e as { message?: unknown })?.message === "string"
        ? (e as { message: string }).message
        : res.statusText;
  return { ok: false, status: res.status, error };
}

const q = (query: string) => (query ? `?${query}` : "");

export const api = {
  toolsets: (query: string) => get<ConsolePayload>(`api/toolsets${q(query)}`),
  recheck: (name: string, query: string) =>
    get<ConsolePayload>(`api/recheck/${encodeURIComponent(name)}${q(query)}`),
  live: () => get<LivePayload>("api/live"),
};
