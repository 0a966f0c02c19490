// Compiles schema/packs.schema.json into dist/config/packs-validator.js at build time (ajv standalone), so that
// loading a config does not compile the schema at every start (~60-90 ms). src/config/schema.ts falls back to
// compiling at run time when this file is absent (tests run from src/).
import { readFileSync, writeFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import standaloneCode from "ajv/dist/standalone/index.js";

const schema = JSON.parse(readFileSync(new URL("../schema/packs.schema.json", import.meta.url), "utf8"));
const ajv = new Ajv2020({ allErrors: true, verbose: true, strict: true, allowUnionTypes: true, code: { source: true, esm: true } });
const validate = ajv.compile(schema);
writeFileSync(new URL("../dist/config/packs-validator.js", import.meta.url), standaloneCode.default(ajv, validate));
