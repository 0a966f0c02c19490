import { createRequire } from "node:module";
import type * as Prom from "prom-client";
import { describe, expect, it } from "vitest";
import { Metrics } from "../../src/metrics.js";
import { KeptCounter, KeptHistogram } from "../../src/metrics-series.js";

const require = createRequire(import.meta.url);
const Counter = require("prom-client/lib/counter") as typeof Prom.Counter;
const Histogram = require("prom-client/lib/histogram") as typeof Prom.Histogram;
const Registry = require("prom-client/lib/registry") as typeof Prom.Registry;

const BOUNDS = [0.001, 0.01, 0.1, 1];
const OBSERVED: [string, string, number][] = [
  ["echo", "a", 0.0004],
  ["echo", "a", 0.001],
  ["echo", "a", 0.05],
  ["echo", 'b"\\\n', 2],
  ["other", "a", 0.3],
];

describe("series kept by toolpacks print as prom-client's own", () => {
  it("a counter and a histogram fed the same values give the same /metrics text and the same get()", async () => {
    const theirs = new Registry();
    const pc = new Counter({
      name: "c_total",
      help: "h",
      labelNames: ["upstream", "tool"],
      registers: [theirs],
    });
    const ph = new Histogram({
      name: "d_seconds",
      help: "h",
      labelNames: ["upstream", "tool"],
      buckets: BOUNDS,
      registers: [theirs],
    });
    const ours = new Registry();
    const kc = new KeptCounter("c_total", "h", ours);
    const kh = new KeptHistogram("d_seconds", "h", ours, BOUNDS);
    for (const [upstream, tool, v] of OBSERVED) {
      pc.inc({ upstream, tool });
      ph.observe({ upstream, tool }, v);
      const key = `${upstream}\0${tool}`;
      kc.inc(kc.series(key, { upstream, tool }));
      kh.observe(kh.series(key, { upstream, tool }), v);
    }
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await kc.get()).toEqual(await pc.get());
    // Without exemplars (toolpacks records none): the same values, labels and names.
    const { values, ...rest } = await ph.get();
    expect(await kh.get()).toEqual({ ...rest, values: values.map((v) => ({ ...v, exemplar: undefined })) });
    // A value on a bound counts in that bound's bucket (le is "less or equal").
    expect(await ours.metrics()).toContain('d_seconds_bucket{le="0.001",upstream="echo",tool="a"} 2');
  });

  it("a gateway's call metrics count each call once, by its labels, in one series per label set", async () => {
    const m = new Metrics();
    m.recordCall("files", "read", "fs", "ok", 0.002);
    m.recordCall("files", "read", "fs", "ok", 0.2);
    m.recordCall("files", "read", "fs", "error", 0.2, "alice");
    // Found again by a route object: the same series, whether or not the first call named the route.
    const route = {};
    m.recordCall("files", "read", "fs", "ok", 0.2, undefined, route);
    m.recordCall("files", "read", "fs", "ok", 0.2, undefined, route);
    const text = await m.text();
    expect(text).toContain('toolpacks_calls_total{toolset="files",tool="read",upstream="fs",outcome="ok"} 4');
    expect(text).toContain(
      'toolpacks_calls_total{toolset="files",tool="read",upstream="fs",outcome="error"} 1',
    );
    expect(text).toContain('toolpacks_call_duration_seconds_count{upstream="fs",tool="read"} 5');
    expect(text).toContain('toolpacks_subject_calls_total{subject="alice",outcome="error"} 1');
    const counted = await m.calls.get();
    expect(counted.values.map((v) => v.value).sort()).toEqual([1, 4]);
  });
});
