/** Loader hooks of loaded-modules.mjs: appends each ES module's URL to the log as it loads. */
import { appendFileSync } from "node:fs";

let log;
export function initialize(data) {
  log = data.log;
}

export async function load(url, context, next) {
  appendFileSync(log, `${url}\n`);
  return next(url, context);
}
