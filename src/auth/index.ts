/** @module Identity: toolpacks as an OAuth 2.1 resource server, and toolsets by identity. */
export { type Authenticator, createAuthenticator } from "./authenticator.js";
export {
  challengeInsufficientScope,
  challengeUnauthorized,
  resourceMetadataUrlFor,
} from "./challenge.js";

export { checkAuthConfig, checkRequires } from "./config-check.js";
export { discoveryUrls } from "./discovery.js";
export { CLOCK_SKEW_S } from "./jwt.js";
export { JWKS_COOLDOWN_MS } from "./keys.js";
export { metadataPaths } from "./metadata.js";
export {
  grantKey,
  grants,
  meetsRequirement,
  parsePrincipalJson,
  scopesToChallenge,
} from "./requirements.js";

export type {
  AuthConfig,
  AuthResult,
  OAuthConfig,
  Principal,
  Requires,
} from "./types.js";
