/** `state:` and TOOLPACKS_STATE_STORE compile into a plan; a malformed one says which setting and how to fix it. */
import { describe, expect, test } from "vitest";
import { SettingError } from "../../../src/config/setting-error.js";
import { planState } from "../../../src/state/config.js";
import { redactUrl } from "../../../src/state/errors.js";

describe("planState", () => {
  test("memory is the default, with the documented budgets", () => {
    expect(planState(undefined, "p", {})).toMatchObject({
      kind: "memory",
      limits: { maxOwnerBytes: 8 * 1024 * 1024, maxTotalBytes: 256 * 1024 * 1024, maxEnded: 10_000 },
    });
  });

  test("the environment overrides the file, and the plan shows the URL without its password", () => {
    const plan = planState({ store: "memory", max_session_bytes: 4096 }, "prod", {
      TOOLPACKS_STATE_STORE: "rediss://:s3cret-pass@cache.internal:6380/2",
    });
    expect(plan).toMatchObject({
      kind: "redis",
      url: "rediss://:s3cret-pass@cache.internal:6380/2",
      description: "rediss://:***@cache.internal:6380/2",
      name: "prod",
      timeoutMs: 2000,
      limits: { maxOwnerBytes: 4096 },
    });
  });

  test.each([
    [{ store: "postgres://db/0" }, {}, "state.store: unsupported store postgres"],
    [{ store: "not a url" }, {}, 'state.store: "not a url" is not a URL'],
    [
      {},
      { TOOLPACKS_STATE_STORE: "redis://h:6379/x" },
      'TOOLPACKS_STATE_STORE: database "x" is not a number',
    ],
    [{ max_session_bytes: 10 }, {}, "state.max_session_bytes: must be an integer of at least 1024"],
    [{ max_session_bytes: 8192, max_total_bytes: 4096 }, {}, "state.max_total_bytes: 4096 is below"],
  ])("%j with %j is refused: %s", (config, env, message) => {
    const run = () => planState(config, "p", env);
    expect(run).toThrow(SettingError);
    expect(run).toThrow(message);
  });

  test("a URL that does not parse is still shown without what looks like a password", () => {
    expect(redactUrl("redis://:pw@[bad")).toBe("redis://***@[bad");
    expect(() => planState({ store: "redis://:pw@[bad" }, "p", {})).toThrow(/\*\*\*@\[bad/);
  });
});
