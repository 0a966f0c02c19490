/**
 * @module The live panel: open sessions per selection, calls and errors per toolset over the last minutes, and
 * the audit log's latest calls. Asked for every few seconds while the page is visible, never while it is hidden:
 * with nobody looking the server does nothing for it.
 */
import type { LivePayload } from "../wire.js";
import { byId, fill, h } from "./dom.js";

function sparkline(minutes: LivePayload["calls"][number]["minutes"]): HTMLElement {
  const max = Math.max(1, ...minutes.map((m) => (m ? m.ok + m.errors : 0)));
  return h(
    "span",
    { class: "spark", "aria-hidden": "true" },
    ...minutes.map((m) => {
      const bar = h("span", {
        class: m ? (m.errors ? "spark-bar has-errors" : "spark-bar") : "spark-bar unknown",
      });
      bar.style.height = m ? `${Math.max(8, (100 * (m.ok + m.errors)) / max)}%` : "8%";
      return bar;
    }),
  );
}

export function drawLive(live: LivePayload): void {
  fill(
    byId("sessions"),
    live.sessions.length
      ? h(
          "ul",
          { class: "plain" },
          ...live.sessions.map((s) =>
            h(
              "li",
              { "data-selection": s.selection },
              h("code", {}, s.selection || "(nothing)"),
              ` ${s.count} open session${s.count === 1 ? "" : "s"}`,
            ),
          ),
        )
      : h("p", { class: "hint" }, "No open sessions."),
  );
  const rows = live.calls.filter((c) => c.ok + c.errors > 0);
  fill(
    byId("calls"),
    rows.length
      ? h(
          "table",
          {},
          h(
            "caption",
            { class: "visually-hidden" },
            "Calls per toolset since start, and per minute over the last ten",
          ),
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              h("th", { scope: "col" }, "Toolset"),
              h("th", { scope: "col" }, "Calls"),
              h("th", { scope: "col" }, "Errors"),
              h("th", { scope: "col" }, "Last 10 min"),
            ),
          ),
          h(
            "tbody",
            {},
            ...rows.map((c) => {
              const recent = c.minutes.reduce((n, m) => n + (m ? m.ok + m.errors : 0), 0);
              return h(
                "tr",
                { "data-calls": c.toolset },
                h("th", { scope: "row" }, c.toolset),
                h("td", {}, String(c.ok + c.errors)),
                h("td", { class: c.errors ? "errors" : "" }, String(c.errors)),
                h("td", {}, sparkline(c.minutes), ` ${recent}`),
              );
            }),
          ),
        )
      : h("p", { class: "hint" }, "No tool calls yet."),
  );
  const audit = byId("recent");
  if (live.audit.sink !== "file") {
    fill(
      audit,
      h(
        "p",
        { class: "hint" },
        live.audit.sink === "off"
          ? "The latest calls are shown with an audit log file (audit: { file: ./audit.jsonl })."
          : "The audit log goes to stderr: the latest calls are shown with audit: { file: … }.",
      ),
    );
    return;
  }
  fill(
    audit,
    live.audit.recent.length
      ? h(
          "table",
          {},
          h("caption", { class: "visually-hidden" }, "Latest calls from the audit log"),
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              ...["Time", "Subject", "Tool", "Outcome", "ms"].map((t) => h("th", { scope: "col" }, t)),
            ),
          ),
          h(
            "tbody",
            {},
            ...live.audit.recent
              .slice()
              .reverse()
              .map((c) =>
                h(
                  "tr",
                  {},
                  h("td", {}, c.time.slice(11, 19)),
                  h("td", {}, c.subject ?? "—"),
                  h("td", {}, h("code", {}, c.tool), ` (${c.toolset})`),
                  h("td", { class: c.outcome === "ok" ? "" : "errors" }, c.outcome),
                  h("td", {}, String(Math.round(c.duration_ms))),
                ),
              ),
          ),
        )
      : h("p", { class: "hint" }, "No calls in the audit log yet."),
  );
}
