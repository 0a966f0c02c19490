/**
 * The one subscriptions/listen stream of a 2026-07-28 upstream connection (src/upstream/listen.ts), against a fake
 * upstream and a fake clock: what it asks for, how a subscription change replaces it, what it hands on, and how it
 * comes back after the upstream ends it.
 */

import { afterEach, beforeEach, expect, test, vi } from "vitest";
import { Listener, type SubscriptionFilter } from "../../src/upstream/listen.js";
import type { Signal } from "../../src/wire/signal.js";

type Note = { method: string; params?: Record<string, unknown> };

interface Opened {
  id: string;
  filter: SubscriptionFilter;
  signal: Signal;
  send(n: Note): void;
  ack(honoured?: SubscriptionFilter): void;
  end(): void;
  fail(err: unknown): void;
}

const SUB = "io.modelcontextprotocol/subscriptionId";

function fake(capabilities: Record<string, unknown>) {
  const opened: Opened[] = [];
  const changed: number[] = [];
  const handed: Note[] = [];
  const refused: string[] = [];
  const listener = new Listener({
    capabilities,
    open: (id, filter, signal, onNotification) =>
      new Promise((resolve, reject) => {
        opened.push({
          id,
          filter,
          signal,
          send: onNotification,
          ack: (honoured = filter) =>
            onNotification({
              method: "notifications/subscriptions/acknowledged",
              params: { notifications: honoured, _meta: { [SUB]: id } },
            }),
          end: () => resolve({ _meta: { [SUB]: id } }),
          fail: reject,
        });
      }),
    onListChanged: () => changed.push(1),
    onNotification: (n) => handed.push(n),
    onRefused: (reason) => refused.push(reason),
  });
  return { listener, opened, changed, handed, refused };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const flush = () => vi.advanceTimersByTimeAsync(0);

test("it listens for the list kinds the upstream announces changes of, and for nothing when it announces none", async () => {
  const some = fake({ tools: { listChanged: true }, prompts: {}, resources: { subscribe: true } });
  some.listener.start();
  expect(some.opened.map((o) => o.filter)).toEqual([{ toolsListChanged: true }]);
  const none = fake({ tools: {} });
  none.listener.start();
  expect(none.opened).toHaveLength(0);
});

test("a subscription opens a stream with its URI, and the old stream closes once the new one is acknowledged", async () => {
  const f = fake({ tools: { listChanged: true }, resources: { subscribe: true } });
  f.listener.start();
  f.opened[0]!.ack();
  await flush();
  const subscribed = f.listener.subscribe("file:///a", 5000);
  await flush();
  expect(f.opened[1]!.filter).toEqual({ toolsListChanged: true, resourceSubscriptions: ["file:///a"] });
  expect(f.opened[0]!.signal.aborted).toBe(false);
  f.opened[1]!.ack();
  await subscribed;
  expect(f.opened[0]!.signal.aborted).toBe(true);
  // The old stream's messages are not handed on any more; the new one's are, without the subscription id.
  f.opened[0]!.send({
    method: "notifications/resources/updated",
    params: { uri: "file:///a", _meta: { [SUB]: f.opened[0]!.id } },
  });
  f.opened[1]!.send({
    method: "notifications/resources/updated",
    params: { uri: "file:///a", _meta: { [SUB]: f.opened[1]!.id } },
  });
  expect(f.handed).toEqual([{ method: "notifications/resources/updated", params: { uri: "file:///a" } }]);
});

test("a subscription the upstream does not acknowledge is refused", async () => {
  const f = fake({ resources: { subscribe: true } });
  const subscribed = f.listener.subscribe("file:///a", 5000);
  await flush();
  f.opened[0]!.ack({});
  await expect(subscribed).rejects.toThrow(/did not accept a subscription to file:\/\/\/a/);
  expect(f.listener.subscriptions).toEqual([]);
});

test("a list change reads the lists again and is handed on", async () => {
  const f = fake({ tools: { listChanged: true } });
  f.listener.start();
  f.opened[0]!.ack();
  await flush();
  f.opened[0]!.send({
    method: "notifications/tools/list_changed",
    params: { _meta: { [SUB]: f.opened[0]!.id } },
  });
  expect(f.changed).toHaveLength(1);
  expect(f.handed).toEqual([{ method: "notifications/tools/list_changed", params: {} }]);
});

test("on stdio a notification is matched to its stream by the subscription id in _meta", async () => {
  const f = fake({ tools: { listChanged: true } });
  f.listener.start();
  f.opened[0]!.ack();
  await flush();
  const mine = { method: "notifications/tools/list_changed", params: { _meta: { [SUB]: f.opened[0]!.id } } };
  expect(f.listener.receive(mine)).toBe(true);
  expect(
    f.listener.receive({ method: "notifications/tools/list_changed", params: { _meta: { [SUB]: "other" } } }),
  ).toBe(false);
  expect(f.changed).toHaveLength(1);
});

test("a stream the upstream ends is opened again after a delay, and the lists are read again", async () => {
  const f = fake({ tools: { listChanged: true } });
  f.listener.start();
  f.opened[0]!.ack();
  await flush();
  f.opened[0]!.end();
  await flush();
  expect(f.opened).toHaveLength(1);
  await vi.advanceTimersByTimeAsync(1000);
  expect(f.opened).toHaveLength(2);
  f.opened[1]!.ack();
  await flush();
  expect(f.changed).toHaveLength(1);
});

test("a stream that breaks before its acknowledgement is tried again, later each time", async () => {
  const f = fake({ tools: { listChanged: true } });
  f.listener.start();
  f.opened[0]!.fail(new Error("socket hang up"));
  await vi.advanceTimersByTimeAsync(1000);
  expect(f.opened).toHaveLength(2);
  f.opened[1]!.fail(new Error("socket hang up"));
  await vi.advanceTimersByTimeAsync(1000);
  expect(f.opened).toHaveLength(2);
  await vi.advanceTimersByTimeAsync(1000);
  expect(f.opened).toHaveLength(3);
});

test("a stream the upstream refuses is not opened again", async () => {
  const f = fake({ tools: { listChanged: true } });
  f.listener.start();
  f.opened[0]!.fail(Object.assign(new Error("Method not found"), { code: -32601 }));
  await vi.advanceTimersByTimeAsync(60_000);
  expect(f.opened).toHaveLength(1);
  expect(f.refused).toHaveLength(1);
});

test("a closed listener ends its stream and opens none again", async () => {
  const f = fake({ tools: { listChanged: true } });
  f.listener.start();
  f.opened[0]!.ack();
  await flush();
  f.listener.close();
  expect(f.opened[0]!.signal.aborted).toBe(true);
  f.opened[0]!.end();
  await vi.advanceTimersByTimeAsync(60_000);
  expect(f.opened).toHaveLength(1);
});
