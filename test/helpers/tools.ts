/** The real tool registry of a resolution, for the pure tests: what tools/list shows, the built-ins included. */
import { listsOf } from "../../src/proxy/lists.js";
import { SearchIndexes } from "../../src/proxy/search-indexes.js";
import { builtIns } from "../../src/proxy/tools/builtins.js";
import { ToolRegistries } from "../../src/proxy/tools/registry.js";
import type { Resolution } from "../../src/resolve.js";

/** The lists a session of `resolution` answers, with list_server_toolsets on or off (inspect_state: capture on). */
export function listsFor(resolution: Resolution, toolsetsTool: boolean, capture = true) {
  const registries = new ToolRegistries(
    builtIns({
      toolsetsTool,
      capture,
      report: () => {
        throw new Error("not reported in this test");
      },
      handles: undefined as never,
      indexes: new SearchIndexes(),
    }),
  );
  return listsOf(resolution, registries.of(resolution));
}
