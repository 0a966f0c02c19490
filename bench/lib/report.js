/** @module Turns the measured figures into the targets verdicts and a Markdown report a person reads. */

import { consoleMarkdown } from "../console.mjs";
import { searchMarkdown, searchVerdicts } from "../search/measure.mjs";
import { abuseMarkdown } from "./abuse.js";

const fmt = (v, digits = 0) =>
  Number.isFinite(v)
    ? v.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits })
    : "–";
const ms = (v) => (Number.isFinite(v) ? fmt(v, v < 10 ? 2 : 1) : "–");
const kb = (v) => fmt(v / 1024, 1);
const mb = (v) => fmt(v / 1048576, 1);

/** Columns of the main table: where a figure lives, how it prints, and whether lower is better. */
const COLUMNS = [
  ["CPU µs/call seq", (t) => t.seq?.cpuPerCall, (v) => fmt(v)],
  ["CPU µs/call c16", (t) => t.c16?.cpuPerCall, (v) => fmt(v)],
  ["seq p50 ms", (t) => t.seq?.p50, ms],
  ["seq p99 ms", (t) => t.seq?.p99, ms],
  ["seq calls/s", (t) => t.seq?.rps, (v) => fmt(v)],
  ["c16 calls/s", (t) => t.c16?.rps, (v) => fmt(v)],
  ["c16 p99 ms", (t) => t.c16?.p99, ms],
  ["c64 calls/s", (t) => t.c64?.rps, (v) => fmt(v)],
  ["c64 p99 ms", (t) => t.c64?.p99, ms],
  ["RSS idle MB", (t) => t.memory?.idleRss, mb],
  ["KB/session", (t) => t.memory?.perSession, kb],
];

function reference(results) {
  for (const name of ["toolpacks-http", "bare"]) if (results.echo[name]?.seq) return name;
  return Object.keys(results.echo).find((n) => results.echo[n]?.seq);
}

function bestPeer(results, get, higher) {
  const vals = ["supergateway", "mcp-proxy"]
    .map((n) => [n, get(results.echo[n] ?? {})])
    .filter(([, v]) => Number.isFinite(v));
  if (!vals.length) return undefined;
  return vals.reduce((a, b) => ((higher ? b[1] > a[1] : b[1] < a[1]) ? b : a));
}

/** The targets, each met / not met / not measured, with the figures behind it. */
export function verdicts(results) {
  const tp = results.echo["toolpacks-http"] ?? {};
  const out = [];
  const add = (target, measured, goal, ok) =>
    out.push({
      target,
      measured,
      goal,
      status: ok === null ? "measured" : ok === undefined ? "not measured" : ok ? "met" : "not met",
    });
  const cpu = tp.seq?.cpuPerCall;
  add(
    "proxy CPU per forwarded call",
    `${fmt(cpu)} µs`,
    "≤ 250 µs",
    Number.isFinite(cpu) ? cpu <= 250 : undefined,
  );
  const peerRps = bestPeer(results, (t) => t.c16?.rps, true);
  const rps = tp.c16?.rps;
  add(
    "calls/s at 16 concurrent",
    peerRps && Number.isFinite(rps) ? `${fmt(rps)} = ${fmt(rps / peerRps[1], 2)}× ${peerRps[0]}` : "–",
    "≥ 1.5× the best peer",
    peerRps && Number.isFinite(rps) ? rps >= 1.5 * peerRps[1] : undefined,
  );
  const peerP50 = bestPeer(results, (t) => t.seq?.p50, false);
  const p50 = tp.seq?.p50;
  add(
    "sequential p50 vs peers",
    peerP50 && Number.isFinite(p50) ? `${ms(p50)} ms vs ${ms(peerP50[1])} ms (${peerP50[0]})` : "–",
    "≤ the best peer's",
    peerP50 && Number.isFinite(p50) ? p50 <= peerP50[1] : undefined,
  );
  const floor = (results.echo.bare?.seq?.p50 ?? Number.NaN) + (results.echo.direct?.seq?.p50 ?? Number.NaN);
  add(
    "sequential p50 vs floor",
    Number.isFinite(p50) && Number.isFinite(floor)
      ? `${ms(p50)} ms = ${fmt(p50 / floor, 2)}× (${ms(floor)} ms)`
      : "–",
    "≤ 1.3× (bare HTTP hop + direct stdio)",
    Number.isFinite(p50) && Number.isFinite(floor) ? p50 <= 1.3 * floor : undefined,
  );
  // Issue #24's targets: ratios of the same run.
  const ratio = (a, b, goal, what, of) => {
    const ok = Number.isFinite(a) && Number.isFinite(b);
    add(
      what,
      ok ? `${fmt(a)} µs ÷ ${fmt(b)} µs = ${fmt(a / b, 2)}×` : "–",
      `≤ ${fmt(goal, 1)}× ${of}`,
      ok ? a / b <= goal : undefined,
    );
  };
  const bare = results.echo.bare ?? {};
  ratio(cpu, bare.seq?.cpuPerCall, 2.2, "proxy CPU per 2025 call, sequential", "the bare node:http hop");
  ratio(
    tp.c16?.cpuPerCall,
    bare.c16?.cpuPerCall,
    2.5,
    "proxy CPU per 2025 call, 16 concurrent",
    "the bare node:http hop",
  );
  // What the ratios to the bare hop leave out: every proxy of this shape also writes to and reads from
  // the upstream's pipe. The relay makes exactly those two hops and nothing else.
  const relay = results.echo.relay ?? {};
  for (const [phase, label] of [
    ["seq", "sequential"],
    ["c16", "16 concurrent"],
  ]) {
    const a = phase === "seq" ? cpu : tp.c16?.cpuPerCall;
    const b = relay[phase]?.cpuPerCall;
    const floor = bare[phase]?.cpuPerCall;
    const ok = Number.isFinite(a) && Number.isFinite(b);
    add(
      `proxy CPU per 2025 call, ${label}, vs the bare relay`,
      ok
        ? `${fmt(a)} µs ÷ ${fmt(b)} µs = ${fmt(a / b, 2)}× (the relay itself: ${fmt(b / floor, 2)}× the bare hop)`
        : "–",
      "what toolpacks' features cost over the two hops",
      ok ? null : undefined,
    );
  }
  ratio(
    results.echo["toolpacks-http-2026"]?.seq?.cpuPerCall,
    cpu,
    1.0,
    "proxy CPU per 2026-07-28 stateless call, sequential",
    "a 2025 session call",
  );
  const ev = results.everything["toolpacks-http"];
  ratio(
    ev?.echo?.cpuPerCall,
    ev?.fixtureEcho?.cpuPerCall,
    1.5,
    "proxy CPU per echo through server-everything (same rounds)",
    "through the echo fixture",
  );
  const per = tp.memory?.perSession;
  add(
    "RSS per open idle session",
    Number.isFinite(per) ? `${kb(per)} KB (${tp.memory.sessions} sessions)` : "–",
    "≤ 60 KB",
    Number.isFinite(per) ? per <= 60 * 1024 : undefined,
  );
  const r = results.library.resolve;
  const rOk = Number.isFinite(r?.p50Ms);
  add(
    "resolve() at 2,000 tools × 200 toolsets",
    rOk
      ? `${ms(r.p50Ms)} ms p50 (CPU ${ms(r.cpuMs)} ms incl. GC threads; first call ${ms(r.coldMs)} ms)`
      : "–",
    "≤ 2 ms",
    rOk ? r.p50Ms <= 2 : undefined,
  );
  for (const c of results.startup?.cases ?? []) {
    const ok = Number.isFinite(c.stdio) && Number.isFinite(c.direct);
    add(
      `first tools/list over stdio, ${c.name}`,
      ok
        ? `${ms(c.stdio)} ms = upstreams alone ${ms(c.direct)} ms + ${ms(c.stdioOver)} ms` +
            (Number.isFinite(c.nodeStart) ? ` (Node's own start: ${ms(c.nodeStart)} ms)` : "")
        : "–",
      "≤ the upstreams alone + 50 ms",
      ok ? c.stdioOver <= 50 : undefined,
    );
  }
  if (results.search?.quality) out.push(...searchVerdicts(results.search));
  const page = results.console;
  if (page?.readyMs) {
    add(
      "console first load, transferred (compressed)",
      `${kb(page.bytes)} KB`,
      "≤ 150 KB",
      page.bytes <= 150 * 1024,
    );
    add(
      "console first load, navigation to usable (median)",
      `${fmt(page.readyMs.median)} ms`,
      "≤ 1,000 ms",
      page.readyMs.median <= 1000,
    );
  }
  return out;
}

function spread(xs) {
  const v = (xs ?? []).filter(Number.isFinite);
  return v.length ? `${fmt(Math.min(...v))}–${fmt(Math.max(...v))}` : "–";
}

function table(head, rows) {
  const line = (cells) => `| ${cells.join(" | ")} |`;
  return [line(head), line(head.map(() => "---")), ...rows.map(line)].join("\n");
}

function mainTable(results, ref) {
  const names = Object.keys(results.echo);
  const rows = names.map((n) => {
    const t = results.echo[n];
    if (t.skipped) return [n, ...COLUMNS.map(() => "–")];
    return [
      n,
      ...COLUMNS.map(([, get, show]) => {
        const v = get(t);
        const base = get(results.echo[ref] ?? {});
        if (!Number.isFinite(v)) return "–";
        const ratio = Number.isFinite(base) && base > 0 && n !== ref ? ` (${fmt(v / base, 2)}×)` : "";
        return `${show(v)}${ratio}`;
      }),
    ];
  });
  return table(["target", ...COLUMNS.map((c) => c[0])], rows);
}

/** Row ÷ column for one figure: every target against every other. */
function matrix(results, get, show) {
  const names = Object.keys(results.echo).filter((n) => Number.isFinite(get(results.echo[n])));
  const rows = names.map((a) => [
    `${a} (${show(get(results.echo[a]))})`,
    ...names.map((b) => (a === b ? "1" : fmt(get(results.echo[a]) / get(results.echo[b]), 2))),
  ]);
  return table(["row ÷ column", ...names], rows);
}

export function markdown(results) {
  const ref = reference(results);
  const m = results.meta;
  const out = [];
  out.push("# toolpacks benchmark", "");
  out.push(
    `${m.date} · Node ${m.node} · ${m.cpus} × ${m.cpuModel} · ${m.mode} run: ${m.rounds} rounds, slices of ` +
      `${m.sliceMs} ms, interleaved · total ${fmt(m.totalSeconds, 0)} s · load average ${m.loadStart} at start, ` +
      `${m.loadEnd} at end`,
    "",
  );
  if (m.mode === "quick") {
    out.push(
      "> Quick smoke run: short slices, little warm-up, few sessions. The verdicts are not meaningful.",
      "",
    );
  }
  out.push(
    "## Targets",
    "",
    table(["target", "measured", "goal", "status"], verdicts(results).map(Object.values)),
  );
  out.push("", "## Echo tool through each target (medians across rounds)", "");
  const c64 = m.loadSessions < 64 ? ` (this run: 64 calls in flight over ${m.loadSessions} sessions)` : "";
  out.push(
    `Ratios in parentheses are to **${ref}** in this run. c16/c64: 16/64 concurrent sessions${c64}.`,
    "",
  );
  out.push(mainTable(results, ref), "");
  out.push(
    "CPU is the target process's own (all threads, not its children; for `direct`, the upstream's).",
    "",
  );
  out.push(
    table(
      ["target", "what", "CPU µs/call seq, rounds min–max", "notes"],
      Object.entries(results.echo).map(([n, t]) => [
        n,
        t.label ?? "",
        spread(t.rounds?.seq?.map((r) => r.cpuPerCall)),
        t.skipped ? `skipped: ${t.skipped}` : (t.note ?? ""),
      ]),
    ),
    "",
  );
  out.push("### CPU per forwarded call (sequential), row ÷ column", "");
  out.push(
    matrix(
      results,
      (t) => t.seq?.cpuPerCall,
      (v) => `${fmt(v)} µs`,
    ),
    "",
  );
  out.push("### Calls/s at 16 concurrent sessions, row ÷ column", "");
  out.push(
    matrix(
      results,
      (t) => t.c16?.rps,
      (v) => fmt(v),
    ),
    "",
  );
  const ev = Object.entries(results.everything).filter(([, t]) => t.echo);
  if (ev.length) {
    out.push("## server-everything upstream (sequential)", "");
    out.push(
      "Each toolpacks target runs in front of the echo fixture too, in the same rounds (`fixture`): the " +
        "ratio is read within one interleave, every process warmed by the same count of calls.",
      "",
    );
    out.push(
      table(
        [
          "target",
          "echo p50 ms",
          "echo CPU µs/call",
          "fixture echo CPU µs/call",
          "÷ fixture",
          "tools/list p50 ms",
          "tools/list CPU µs",
          "tools",
          "bytes",
        ],
        ev.map(([n, t]) => [
          n,
          ms(t.echo.p50),
          fmt(t.echo.cpuPerCall),
          fmt(t.fixtureEcho?.cpuPerCall),
          fmt(t.echo.cpuPerCall / t.fixtureEcho?.cpuPerCall, 2),
          ms(t.list?.p50),
          fmt(t.list?.cpuPerCall),
          t.tools ?? "–",
          fmt(t.bytes),
        ]),
      ),
      "",
    );
  }
  const sel = results.example.selections;
  if (Array.isArray(sel)) {
    out.push("## tools/list per selection of packs.example.yaml", "");
    out.push(
      table(
        ["selection", "query", "tools", "bytes", "≈tokens", "of all"],
        sel.map((r) => [
          r.label,
          `\`${r.query}\``,
          r.tools,
          fmt(r.bytes),
          fmt(r.tokens),
          `${fmt(r.ofAll * 100)} %`,
        ]),
      ),
      "",
    );
  }
  const h = results.example.handles;
  if (h?.on) {
    out.push("## Large values by handle (capture)", "");
    out.push(
      `Read a ${fmt(h.fileBytes)}-byte file through server-filesystem and write it to a new path: bytes the ` +
        "model sees (the read result, the write's arguments, the write result).",
      "",
      table(
        ["capture", "read result", "write arguments", "write result", "total", "≈tokens", "copy identical"],
        [
          [
            "on (over 16 KiB)",
            fmt(h.on.read),
            fmt(h.on.write),
            fmt(h.on.result),
            fmt(h.on.total),
            fmt(h.on.total / 4),
            h.on.same ? "yes" : "NO",
          ],
          [
            "off",
            fmt(h.off.read),
            fmt(h.off.write),
            fmt(h.off.result),
            fmt(h.off.total),
            fmt(h.off.total / 4),
            h.off.same ? "yes" : "NO",
          ],
        ],
      ),
      "",
      `Capture on: ${fmt(h.ratio)}× fewer bytes.`,
      "",
    );
  }
  out.push(...abuseMarkdown(results.abuse));
  const lib = results.library.resolve;
  if (lib?.p50Ms !== undefined) {
    out.push("## Library", "");
    out.push(
      `resolve() of all ${lib.toolsets} toolsets / ${lib.tools} tools: p50 ${ms(lib.p50Ms)} ms, p99 ` +
        `${ms(lib.p99Ms)} ms, process CPU ${ms(lib.cpuMs)} ms per call; first call ${ms(lib.coldMs)} ms; ` +
        `select() ${fmt(lib.selectUs, 1)} µs.`,
      "",
    );
  }
  const cases = results.startup?.cases;
  if (cases?.length) {
    out.push("## Start-up: spawn → first tools/list answered", "");
    out.push(
      `Fresh processes, ${cases[0].runs} interleaved rounds, medians. "Upstreams alone": a client spawns the ` +
        "case's upstreams itself, all at once, and is done when the slowest has answered initialize and " +
        "tools/list. Through toolpacks: the client spawns `toolpacks serve` (stdio), or spawns it over HTTP and " +
        "connects once it listens; toolpacks spawns the upstreams. toolpacks CPU: its own process's by its " +
        "first answer (its upstreams' not included). Node's start: `node -e 0`, spawn to exit, in the same " +
        "rounds: no proxy that runs on Node answers sooner than this after its upstreams would.",
      "",
      table(
        [
          "case",
          "upstreams",
          "alone ms",
          "toolpacks stdio ms",
          "toolpacks HTTP ms",
          "HTTP listening ms",
          "Node's start ms",
          "toolpacks CPU ms (stdio, HTTP)",
          "tools",
        ],
        cases.map((c) => [
          c.name,
          c.what,
          ms(c.direct),
          `${ms(c.stdio)} (+${ms(c.stdioOver)})`,
          `${ms(c.http)} (+${ms(c.httpOver)})`,
          ms(c.httpListening),
          Number.isFinite(c.nodeStart) ? ms(c.nodeStart) : "–",
          `${fmt(c.stdioCpu)}, ${fmt(c.httpCpu)}`,
          `${c.tools.direct} alone, ${c.tools.stdio} through`,
        ]),
      ),
      "",
    );
  }
  if (results.search?.quality)
    out.push("## Tool search (deferred toolsets)", "", searchMarkdown(results.search), "");
  if (results.console) out.push(consoleMarkdown(results.console), "");
  out.push("## Notes", "");
  for (const n of results.notes) out.push(`- ${n}`);
  return `${out.join("\n")}\n`;
}
