/**
 * oidc-provider for the test authorization servers, loaded with the warnings the tests provoke on purpose
 * silenced: it runs on Node 20 (the project's runtime), keeps its state in memory (nothing outlives a test) and
 * signs users in through its dev interactions (what `authorizeAs` drives). Any other warning still shows.
 */

/** The warnings of what the test servers do on purpose; matched on the line oidc-provider prints. */
const DELIBERATE: readonly RegExp[] = [
  /^oidc-provider WARNING: Unsupported runtime\./,
  /^oidc-provider WARNING: a quick start development-only in-memory adapter is used/,
  /^oidc-provider WARNING: a quick start development-only feature devInteractions is enabled/,
];

// biome-ignore lint/suspicious/noControlCharactersInRegex: oidc-provider colours its lines on a terminal
const ANSI = /\u001b\[[0-9;]*m/g;
let installed = false;

/** Wraps console.warn once: a deliberate warning is dropped, everything else goes through as before. */
function quietDeliberateWarnings(): void {
  if (installed) return;
  installed = true;
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    const line = typeof args[0] === "string" ? args[0].replace(ANSI, "") : "";
    if (DELIBERATE.some((r) => r.test(line))) return;
    warn.apply(console, args);
  };
}

/** oidc-provider, imported after the filter is in place (it warns about the runtime as it loads). */
export async function loadOidcProvider(): Promise<typeof import("oidc-provider")> {
  quietDeliberateWarnings();
  return import("oidc-provider");
}

/** Every login is an account whose only claim is its subject (what the default would do, said on purpose). */
export const findAccount = async (_ctx: unknown, sub: string) => ({
  accountId: sub,
  claims: async () => ({ sub }),
});
