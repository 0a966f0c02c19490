/**
 * @module One card per toolset: what it is, what it costs, whether it is on, and what is wrong with it. Cards are
 * made once and updated in place, so a switch keeps keyboard focus while the data under it changes.
 */
import type { Problem, ToolsetCard, UpstreamPanel } from "../wire.js";
import { fill, h, link, setAttr, tokens } from "./dom.js";
import type { Model } from "./model.js";

export interface CardActions {
  toggle(name: string): void;
  toggleDefer(name: string): void;
  list(name: string): void;
}

interface View {
  readonly root: HTMLElement;
  readonly sw: HTMLButtonElement;
  readonly swText: HTMLElement;
  readonly badges: HTMLElement;
  readonly status: HTMLElement;
  readonly problem: HTMLElement;
  readonly defer: HTMLButtonElement;
  readonly deferRow: HTMLElement;
  readonly upstreams: HTMLElement;
  readonly details: HTMLDetailsElement;
  readonly summary: HTMLElement;
  readonly body: HTMLElement;
  shown: string;
}

/** A problem in a few words, as the card says it. */
export function problemText(p: Problem): string {
  if (p.reason === "missing") return `missing: ${p.missing.join(", ")}`;
  if (p.reason === "upstream-unavailable") return `upstream unavailable: ${p.detail}`;
  if (p.reason === "forbidden") return `forbidden: ${p.detail || "the caller does not meet its requires:"}`;
  if (p.reason === "authorization_required") return `waiting for an authorization: ${p.detail}`;
  return `conflict: ${p.detail}`;
}

/** A real switch: its name is what it switches (its state is aria-checked; the visible On/Off is not read twice). */
function switchEl(id: string, labelledBy: string, describedBy: string, text: HTMLElement): HTMLButtonElement {
  return h(
    "button",
    {
      type: "button",
      role: "switch",
      class: "switch",
      id,
      "aria-checked": "false",
      "aria-labelledby": labelledBy,
      "aria-describedby": describedBy,
    },
    h("span", { class: "track", "aria-hidden": "true" }, h("span", { class: "thumb" })),
    text,
  );
}

function make(t: ToolsetCard, actions: CardActions): View {
  const id = `ts-${t.name}`;
  const swText = h("span", { class: "switch-text", "aria-hidden": "true" });
  const sw = switchEl(`${id}-switch`, `${id}-title`, `${id}-status ${id}-problem`, swText);
  sw.addEventListener("click", () => actions.toggle(t.name));
  const deferText = h("span", { class: "switch-text", id: `${id}-defer-text` }, "Deferred");
  const defer = switchEl(`${id}-defer`, `${id}-defer-text ${id}-title`, `${id}-defer-why`, deferText);
  defer.addEventListener("click", () => actions.toggleDefer(t.name));
  const deferRow = h(
    "div",
    { class: "defer-row" },
    defer,
    h("span", { id: `${id}-defer-why`, class: "hint" }, "found with find_tools, not listed"),
  );
  const summary = h("summary", {});
  const body = h("div", { class: "tools" });
  const details = h("details", {}, summary, body);
  const status = h("p", { class: "status", id: `${id}-status` });
  const problem = h("p", { class: "problem", id: `${id}-problem` });
  const badges = h("p", { class: "badges" });
  const upstreams = h("p", { class: "upstream-line" });
  const root = h(
    "article",
    { class: "card", "data-toolset": t.name, "aria-labelledby": `${id}-title` },
    h("div", { class: "card-head" }, h("h3", { id: `${id}-title` }, t.title), sw),
    badges,
    t.description ? h("p", { class: "desc" }, t.description) : null,
    status,
    problem,
    upstreams,
    deferRow,
    details,
  );
  return {
    root,
    sw,
    swText,
    badges,
    status,
    problem,
    defer,
    deferRow,
    upstreams,
    details,
    summary,
    body,
    shown: "",
  };
}

function badgesOf(t: ToolsetCard): string[] {
  return [
    t.always ? "always" : t.default ? "default" : "opt-in",
    ...(t.deferred ? ["deferred"] : []),
    ...(t.requires ? ["gated"] : []),
    ...(t.implicit ? ["whole upstream"] : []),
  ];
}

export class Cards {
  private readonly views = new Map<string, View>();

  constructor(
    private readonly container: HTMLElement,
    private readonly actions: CardActions,
  ) {}

  get names(): string[] {
    return [...this.views.keys()];
  }

  root(name: string): HTMLElement | undefined {
    return this.views.get(name)?.root;
  }

  update(model: Model): void {
    const p = model.payload!;
    const order = p.toolsets.map((t) => t.name);
    if (order.join("\n") !== this.names.join("\n")) {
      for (const t of p.toolsets) if (!this.views.has(t.name)) this.views.set(t.name, make(t, this.actions));
      for (const n of this.names) if (!order.includes(n)) this.views.delete(n);
      this.container.replaceChildren(...order.map((n) => this.views.get(n)!.root));
    }
    const panels = new Map(p.upstreams.map((u) => [u.name, u]));
    for (const t of p.toolsets) this.draw(this.views.get(t.name)!, t, model, panels);
  }

  private draw(v: View, t: ToolsetCard, model: Model, panels: Map<string, UpstreamPanel>): void {
    const active = p(model).report.active.includes(t.name);
    const pending = model.pending.has(t.name);
    const on = t.always ? active : model.on.has(t.name) && active;
    const locked = t.forbidden ? "forbidden" : t.always ? "always on: it cannot be switched off" : "";
    setAttr(v.sw, "aria-checked", on ? "true" : "false");
    setAttr(v.sw, "aria-disabled", locked || pending ? "true" : undefined);
    setAttr(v.sw, "aria-busy", pending ? "true" : undefined);
    v.swText.textContent = pending ? "Checking…" : on ? "On" : "Off";
    v.root.classList.toggle("on", on);
    v.root.classList.toggle("forbidden", t.forbidden === true);
    fill(
      v.badges,
      ...badgesOf(t).map((b) => h("span", { class: `badge badge-${b.replace(/\s/g, "-")}` }, b)),
    );

    const cost = t.cost
      ? `${t.cost.tools} tool${t.cost.tools === 1 ? "" : "s"} · ≈${tokens(t.cost.approx_tokens)} tokens`
      : "";
    const state = t.forbidden
      ? "Forbidden to you"
      : pending
        ? "Reading its upstreams' lists again…"
        : on
          ? t.always
            ? "Always on"
            : "On"
          : t.always
            ? "Always on, but not available"
            : "Off";
    const deferNote = on && t.deferred_now ? " · deferred (find_tools)" : "";
    fill(v.status, [state, cost].filter(Boolean).join(" · ") + deferNote);

    const why = t.forbidden ? t.problem : (model.refused.get(t.name) ?? t.problem);
    const lead =
      t.forbidden || on || !why
        ? ""
        : model.refused.has(t.name) || t.state !== "off"
          ? "Stays off: "
          : "Would not switch on: ";
    if (why && !on) {
      const parts: (string | HTMLElement)[] = [lead + problemText(why)];
      if (why.url) parts.push(" ", link(why.url, "authorize"));
      if (!t.forbidden && t.state === "off" && !model.refused.has(t.name))
        parts.push(" (as its upstream last listed; switching it on checks again)");
      fill(v.problem, ...parts);
      v.problem.hidden = false;
    } else {
      fill(v.problem);
      v.problem.hidden = true;
    }

    const ups = (t.upstreams ?? []).map((u) => panels.get(u)).filter((u): u is UpstreamPanel => !!u);
    fill(
      v.upstreams,
      ...(ups.length
        ? [ups.length > 1 ? "Upstreams: " : "Upstream: ", ups.map((u) => `${u.name} (${u.state})`).join(", ")]
        : []),
    );
    v.upstreams.hidden = ups.length === 0;

    const canDefer = on && !t.always && !t.deferred;
    setAttr(v.defer, "aria-checked", on && (t.deferred || t.deferred_now) ? "true" : "false");
    setAttr(v.defer, "aria-disabled", canDefer && !pending ? undefined : "true");
    // Shown where it means something: on a toolset that is on, or one the config defers.
    v.deferRow.hidden = t.forbidden === true || t.always || !(on || t.deferred);

    this.drawTools(v, t);
  }

  private drawTools(v: View, t: ToolsetCard): void {
    const sig = JSON.stringify([t.tools, t.members, t.forbidden]);
    if (sig === v.shown) return;
    v.shown = sig;
    v.details.hidden = t.forbidden === true;
    if (t.forbidden) return;
    if (!t.tools) {
      fill(v.summary, "Tools not listed yet");
      const button = h("button", { type: "button", class: "secondary" }, "List its tools");
      button.addEventListener("click", () => this.actions.list(t.name));
      fill(
        v.body,
        h("p", {}, "Its upstream has not listed its tools yet (nothing is started until it is needed)."),
        button,
        members(t),
      );
      return;
    }
    fill(v.summary, `${t.tools.length} tool${t.tools.length === 1 ? "" : "s"}`);
    fill(
      v.body,
      h(
        "ul",
        {},
        ...t.tools.map((tool) =>
          h(
            "li",
            {},
            h("code", { class: "tool-name" }, tool.name),
            tool.title ? h("span", { class: "tool-title" }, ` ${tool.title}`) : null,
            tool.description ? h("p", { class: "tool-desc" }, tool.description) : null,
          ),
        ),
      ),
      members(t),
    );
  }
}

function members(t: ToolsetCard): HTMLElement | null {
  return t.members?.length
    ? h(
        "p",
        { class: "members" },
        "Members: ",
        ...t.members.flatMap((m, i) => [i ? ", " : "", h("code", {}, m)]),
      )
    : null;
}

function p(model: Model) {
  return model.payload!;
}
