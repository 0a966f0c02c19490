// Compiles schema/packs.schema.json into dist/config/packs-validator.js at build time (ajv standalone), so that
// loading a config neither loads ajv's compiler nor compiles the schema at every start (~120 ms). The standalone
// code is ESM but may still `require` ajv's small runtime helpers (ucs2length for minLength/maxLength): a
// module-level `require` is given to it, then the file is imported once here, so a validator that cannot load
// fails the build instead of silently falling back to run-time compilation. src/config/schema.ts compiles at
// run time only when this file is absent (tests run from src/).
import { readFileSync, writeFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import standaloneCode from "ajv/dist/standalone/index.js";

const schema = JSON.parse(readFileSync(new URL("../schema/packs.schema.json", import.meta.url), "utf8"));
const ajv = new Ajv2020({ allErrors: true, verbose: true, strict: true, allowUnionTypes: true, code: { source: true, esm: true } });
const validate = ajv.compile(schema);
let code = standaloneCode.default(ajv, validate);
if (code.includes("require(")) {
  code = code.replace(
    /^"use strict";/,
    '"use strict";import { createRequire } from "node:module";const require = createRequire(import.meta.url);',
  );
}
const out = new URL("../dist/config/packs-validator.js", import.meta.url);
writeFileSync(out, code);
const built = await import(out.href);
if (typeof built.default !== "function" || built.default({}) !== true) {
  throw new Error("dist/config/packs-validator.js does not validate an empty config");
}
