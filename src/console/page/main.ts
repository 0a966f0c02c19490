/**
 * @module The console page: asks for a token when the server wants one, draws the selection, and turns switches
 * into requests. Switching on asks toolpacks to read the toolset's upstreams again and check (the gate a session
 * meets); switching off never waits for anything. Actions run one after another.
 */
import type { ConsolePayload, LivePayload } from "../wire.js";
import { api, forgetToken, type Got, keepToken, storedToken } from "./api.js";
import { Cards, problemText } from "./cards.js";
import { announce, byId } from "./dom.js";
import { drawLive } from "./live.js";
import { Model } from "./model.js";
import { drawPaste, wireUrlCopy } from "./paste.js";
import { drawSummary } from "./summary.js";
import { drawUpstreams } from "./upstreams.js";

const POLL_MS = 5_000;
const model = new Model();
let chain: Promise<void> = Promise.resolve();
let lastStates = "";
/** The upstream states of the last live poll, while it is newer than the last answer. */
let liveUpstreams: LivePayload["upstreams"] | undefined;

let queued = 0;

/** Runs after what is queued already; while anything is queued the page says so (`data-busy`, for tests and styles). */
function enqueue(step: () => Promise<void>): void {
  queued++;
  document.body.dataset.busy = "true";
  chain = chain
    .then(step)
    .catch((err: Error) => notice(err.message))
    .finally(() => {
      if (--queued === 0) delete document.body.dataset.busy;
    });
}

function notice(text: string): void {
  const el = byId("notice");
  el.textContent = text;
  el.hidden = !text;
}

const cards = new Cards(byId("toolsets"), {
  toggle: (name) => {
    const t = model.card(name);
    if (!t || t.forbidden || t.always || model.pending.has(name)) {
      if (t?.forbidden) announce(`${t.title} is forbidden to you: ${t.problem?.detail ?? ""}`);
      else if (t?.always) announce(`${t.title} is always on`);
      return;
    }
    if (model.on.has(name)) switchOff(name);
    else enqueue(() => switchOn(name));
  },
  toggleDefer: (name) => {
    const t = model.card(name);
    if (!t || !model.on.has(name) || t.always || t.deferred) return;
    if (model.defer.has(name)) model.defer.delete(name);
    else model.defer.add(name);
    enqueue(() => reload());
  },
  list: (name) =>
    enqueue(async () => {
      apply(await api.recheck(name, model.query()));
    }),
});

function draw(): void {
  if (!model.payload) return;
  const p = model.payload;
  document.title = `${p.server.name} · toolpacks console`;
  byId("server-name").textContent = p.server.name;
  byId("server-meta").textContent =
    `toolpacks ${p.server.version}${p.scoped ? " · you see the toolsets your token allows" : ""}`;
  cards.update(model);
  drawSummary(model);
  drawPaste(model);
  drawUpstreams(
    p.upstreams.map((u) => {
      const now = liveUpstreams?.find((l) => l.name === u.name);
      return now ? { ...u, ...now } : u;
    }),
  );
  filterCards();
  const query = model.query();
  history.replaceState(null, "", query ? `?${query}` : location.pathname);
  if (!document.body.dataset.ready) performance.mark("console-ready");
  document.body.dataset.ready = "true";
}

/** Applies an answer; false when it was a refusal (said on the page, and a token asked for on 401). */
function apply(got: Got<ConsolePayload>): boolean {
  if (!got.ok) {
    refused(got);
    return false;
  }
  notice("");
  byId("forget-token").hidden = storedToken() === null;
  byId("token-panel").hidden = true;
  byId("app").hidden = false;
  if (model.payload) model.apply(got.data);
  else model.start(got.data);
  liveUpstreams = undefined;
  draw();
  return true;
}

function refused(got: { status: number; error: string }): void {
  if (got.status === 401) {
    const had = storedToken() !== null;
    forgetToken();
    askToken(had ? "That token was refused. " : "");
    return;
  }
  notice(got.error);
}

/** The page's own query until the first answer, then the selection's. */
const initialQuery = location.search.slice(1);

async function reload(): Promise<void> {
  apply(await api.toolsets(model.payload ? model.query() : initialQuery));
}

async function switchOn(name: string): Promise<void> {
  const title = model.card(name)?.title ?? name;
  model.pending.add(name);
  draw();
  try {
    const got = await api.recheck(name, model.query(name));
    if (!got.ok) return refused(got);
    const card = got.data.toolsets.find((t) => t.name === name);
    if (got.data.report.active.includes(name)) {
      model.on.add(name);
      model.refused.delete(name);
      model.apply(got.data);
      liveUpstreams = undefined;
      announce(`${title} is on`);
    } else {
      const why = card?.problem ?? { reason: "missing" as const, missing: [], detail: "not enabled" };
      model.refused.set(name, why);
      announce(`${title} stays off: ${problemText(why)}`);
      await reload();
    }
  } finally {
    model.pending.delete(name);
    draw();
  }
}

/** Switching off always works: the switch goes off at once, whatever the server answers next. */
function switchOff(name: string): void {
  model.on.delete(name);
  model.defer.delete(name);
  model.refused.delete(name);
  draw();
  announce(`${model.card(name)?.title ?? name} is off`);
  enqueue(() => reload());
}

function askToken(prefix: string): void {
  byId("app").hidden = true;
  byId("token-panel").hidden = false;
  byId("token-why").textContent =
    `${prefix}This toolpacks asks for a bearer token. It is kept in this tab only (sessionStorage) and never shown.`;
  byId<HTMLInputElement>("token").focus();
}

function filterCards(): void {
  const q = byId<HTMLInputElement>("filter").value.trim().toLowerCase();
  for (const t of model.payload?.toolsets ?? []) {
    const text = [
      t.name,
      t.title,
      t.description,
      ...(t.tools ?? []).flatMap((x) => [x.name, x.description ?? ""]),
    ]
      .join(" ")
      .toLowerCase();
    const root = cards.root(t.name);
    if (root) root.hidden = q !== "" && !text.includes(q);
  }
}

async function poll(): Promise<void> {
  if (document.hidden || !model.payload) return;
  const got = await api.live();
  if (!got.ok) return;
  const live = got.data;
  liveUpstreams = live.upstreams;
  drawLive(live);
  const states = live.upstreams.map((u) => `${u.name}:${u.state}:${u.tools}`).join();
  if (lastStates && states !== lastStates) enqueue(() => reload());
  lastStates = states;
  if (!document.hidden) draw();
}

function boot(): void {
  byId("token-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const input = byId<HTMLInputElement>("token");
    const token = input.value.trim();
    input.value = "";
    if (!token) return;
    keepToken(token);
    enqueue(() => reload());
  });
  byId("forget-token").addEventListener("click", () => {
    forgetToken();
    location.reload();
  });
  byId("filter").addEventListener("input", filterCards);
  wireUrlCopy();
  document.addEventListener("visibilitychange", () => void poll());
  setInterval(() => void poll(), POLL_MS);
  enqueue(async () => {
    if (apply(await api.toolsets(initialQuery))) await poll();
  });
}

boot();
