/** @module A panel per upstream: its state and era, how many tools it lists, and the tools no toolset claims. */
import type { UpstreamPanel } from "../wire.js";
import { byId, fill, h } from "./dom.js";

const STATE_TEXT: Record<UpstreamPanel["state"], string> = {
  idle: "idle (not started)",
  starting: "starting",
  ready: "ready",
  failed: "failed",
};

let drawn = "";

/** Redrawn only when something in it changed (an open list of unclaimed tools stays open). */
export function drawUpstreams(panels: readonly UpstreamPanel[]): void {
  const sig = JSON.stringify(panels);
  if (sig === drawn) return;
  drawn = sig;
  fill(
    byId("upstreams"),
    ...panels.map((u) => {
      const isolated = [
        u.instances.credential ? `${u.instances.credential} per-credential` : "",
        u.instances.session ? `${u.instances.session} per-session` : "",
      ].filter(Boolean);
      return h(
        "article",
        { class: `upstream state-${u.state}`, "data-upstream": u.name, "aria-labelledby": `up-${u.name}` },
        h(
          "div",
          { class: "card-head" },
          h("h3", { id: `up-${u.name}` }, u.name),
          h("span", { class: `pill pill-${u.state}` }, STATE_TEXT[u.state]),
        ),
        h(
          "p",
          { class: "hint" },
          [
            u.transport,
            u.isolation === "per-session" ? "per-session" : "",
            u.era ? `MCP ${u.era}` : "",
            u.tools !== null ? `${u.tools} tool${u.tools === 1 ? "" : "s"}` : "",
            isolated.length ? `instances: ${isolated.join(", ")}` : "",
          ]
            .filter(Boolean)
            .join(" · "),
        ),
        u.reason ? h("p", { class: "problem" }, u.reason) : null,
        u.toolsets.length ? h("p", { class: "hint" }, `Toolsets: ${u.toolsets.join(", ")}`) : null,
        u.unclaimed?.length
          ? h(
              "details",
              { class: "unclaimed" },
              h(
                "summary",
                {},
                `${u.unclaimed.length} tool${u.unclaimed.length === 1 ? "" : "s"} no toolset claims`,
              ),
              h("ul", { class: "inline-list" }, ...u.unclaimed.map((n) => h("li", {}, h("code", {}, n)))),
            )
          : null,
      );
    }),
  );
}
