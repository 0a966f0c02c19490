/** @module RSS idle and per open session: many sessions, each initialized and holding its GET SSE stream. */
import { descendantsRss, rssBytes, sleep } from "./proc.js";

/** Opens `n` sessions (`batch` at a time) on a fresh target and reads the proxy's RSS before and after. */
export async function sessionMemory(handle, up, n, { batch = 16, settleMs = 700 } = {}) {
  const warm = await handle.newSession();
  for (let i = 0; i < 50; i++) await warm.call(up.tool, up.arguments);
  await sleep(settleMs);
  const idle = rssBytes(handle.pid);
  const upstreamIdle = descendantsRss(handle.pid);
  const open = [];
  const t0 = performance.now();
  for (let i = 0; i < n; i += batch) {
    const wave = [];
    for (let j = i; j < Math.min(n, i + batch); j++) {
      wave.push(
        handle.newSession().then(async (s) => {
          await s.openStream();
          open.push(s);
        }),
      );
    }
    await Promise.all(wave);
  }
  const openSeconds = (performance.now() - t0) / 1000;
  await sleep(settleMs);
  const loaded = rssBytes(handle.pid);
  const upstreamLoaded = descendantsRss(handle.pid);
  // Every session must still answer: an RSS figure for sessions that were dropped would flatter the target.
  const probe = open[open.length - 1];
  await probe.call(up.tool, up.arguments);
  for (const s of open) s.close();
  warm.close();
  return {
    sessions: n,
    idleRss: idle,
    loadedRss: loaded,
    perSession: (loaded - idle) / n,
    upstreamRssIdle: upstreamIdle,
    upstreamRssLoaded: upstreamLoaded,
    upstreamPerSession: (upstreamLoaded - upstreamIdle) / n,
    openSeconds,
  };
}
