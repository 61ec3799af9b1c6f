// A real OpenID Connect provider (npm `oidc-provider`) for Klaxon's tests, on 127.0.0.1.
//
//   OIDC_STATE_FILE      JSON re-read at every use, so a test can change it between sign-ins:
//                        {"accounts": {"<login>": {"sub"?, "email"?, "email_verified"?,
//                        "preferred_username"?, "groups"?}}, "publish_other_key"?: bool}
//                        Any password signs an account in (the provider's dev interactions).
//                        `publish_other_key` publishes a different key under the signing
//                        key's id, so every ID token looks signed by another key.
//   OIDC_REDIRECT_URIS   comma-separated redirect URIs of the client `klaxon` (secret
//                        `klaxon-secret`).
//   OIDC_PORT            port to listen on (default: any free one).
// Prints one line of JSON, {"issuer": "..."}, once it listens.
import Provider from 'oidc-provider';
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';

const stateFile = process.env.OIDC_STATE_FILE;
const state = () => (stateFile ? JSON.parse(readFileSync(stateFile, 'utf8')) : { accounts: {} });
const redirectUris = (process.env.OIDC_REDIRECT_URIS || 'http://127.0.0.1:8080/api/oidc/callback')
  .split(',').map((u) => u.trim()).filter(Boolean);

const kid = 'test-key';
const rsa = () => generateKeyPairSync('rsa', { modulusLength: 2048 });
const signing = { ...rsa().privateKey.export({ format: 'jwk' }), kid, use: 'sig', alg: 'RS256' };
const other = { ...rsa().publicKey.export({ format: 'jwk' }), kid, use: 'sig', alg: 'RS256' };

const server = http.createServer();
server.listen(Number(process.env.OIDC_PORT || 0), '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, {
    clients: [{
      client_id: 'klaxon',
      client_secret: 'klaxon-secret',
      redirect_uris: redirectUris,
      grant_types: ['authorization_code'],
      response_types: ['code'],
    }],
    jwks: { keys: [signing] },
    cookies: { keys: ['klaxon-test-cookies'] },
    features: { devInteractions: { enabled: true } },
    conformIdTokenClaims: false,
    scopes: ['openid', 'profile', 'email', 'groups'],
    claims: {
      openid: ['sub'],
      profile: ['preferred_username', 'name'],
      email: ['email', 'email_verified'],
      groups: ['groups'],
    },
    async findAccount(_ctx, id) {
      const account = state().accounts[id];
      if (!account) return undefined;
      return {
        accountId: id,
        async claims() {
          const { sub, ...claims } = account;
          return { sub: sub || id, ...claims };
        },
      };
    },
  });
  provider.proxy = false;
  provider.use(async (ctx, next) => {
    if (ctx.path === '/jwks' && state().publish_other_key) {
      ctx.type = 'application/jwk-set+json';
      ctx.body = { keys: [other] };
      return;
    }
    await next();
  });
  server.on('request', provider.callback());
  console.log(JSON.stringify({ issuer }));
});
