/** @module The OAuth client of toolpacks towards its HTTP upstreams: what the serving core wires in. */
export { OAuthClient, type OAuthClientOptions } from "./client.js";
export { checkOAuthConfig } from "./config.js";
export { OAuthFlowError } from "./errors.js";
export { AuthorizationRequired, authChallenge, withUpstreamAuth } from "./fetch.js";
export {
  clientMetadataDocument,
  defaultClientMetadataUrl,
  matchOAuthPath,
  OAUTH_PATHS,
} from "./paths.js";
export { type FlowRequest, type FlowResponse, oauthRoutes } from "./routes.js";
export { EncryptedFileTokenStore } from "./store/file.js";
export { parseTokenKey, TOKEN_KEY_ENV, tokenKeyFromEnv } from "./store/key.js";
export { MemoryTokenStore } from "./store/memory.js";
export { openTokenStore } from "./store/open.js";
export type {
  OAuthUpstream,
  OAuthUpstreamConfig,
  TokenStore,
  UpstreamAuth,
} from "./types.js";
