/** @module Identity: toolpacks as an OAuth 2.1 resource server, and toolsets by identity. */
export { type AuthenticateOptions, type Authenticator, createAuthenticator } from "./authenticator.js";
export {
  challengeInsufficientScope,
  challengeStaticOnly,
  challengeUnauthorized,
  resourceMetadataUrlFor,
  scopeValue,
} from "./challenge.js";
export { claimValues, SPACE_SEPARATED_CLAIMS } from "./claims.js";
export { type AuthProblem, checkAuthConfig, checkRequires } from "./config-check.js";
export { discoveryUrls } from "./discovery.js";
export { CLOCK_SKEW_S, DEFAULT_ALGORITHMS } from "./jwt.js";
export { JWKS_COOLDOWN_MS, JWKS_MAX_AGE_MS } from "./keys.js";
export { metadataPaths, type ProtectedResourceMetadata, protectedResourceMetadata } from "./metadata.js";
export {
  type CatalogRequirements,
  grantKey,
  grants,
  identityKey,
  meetsRequirement,
  parsePrincipalJson,
  scopesToChallenge,
} from "./requirements.js";
export { tokenSubject } from "./static-tokens.js";
export type {
  AuthConfig,
  AuthDeps,
  AuthFailure,
  AuthLogger,
  AuthResult,
  HeadersLike,
  IntrospectionConfig,
  OAuthConfig,
  Principal,
  Requires,
  StaticTokenConfig,
} from "./types.js";
