#!/usr/bin/env node
// Writes test/fixtures/secrets/corpus.json: positive samples built from the public token formats
// of each provider (random values, deterministic seed) inside the kind of prose an agent writes,
// and negative samples that look key-ish but are not secrets (hashes, ids, placeholders,
// documented example keys, prose about passwords and tokens). `npm run eval:secrets` measures
// recall and false positives on it; test/unit/secrets.test.ts holds the targets.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import context from './secret-corpus/context.js';
import structured from './secret-corpus/structured.js';

let seed = 20261122;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
const pick = (a) => a[Math.floor(rand() * a.length)];
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const UPPER_NUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const HEX = '0123456789abcdef';
const B64 = `${ALNUM}+/`;
const URLSAFE = `${ALNUM}-_`;
const s = (alphabet, n) => Array.from({ length: n }, () => pick(alphabet)).join('');
const b64url = (obj) => Buffer.from(JSON.stringify(obj)).toString('base64url');

const uuidv4 = () => `${s(HEX, 8)}-${s(HEX, 4)}-4${s(HEX, 3)}-a${s(HEX, 3)}-${s(HEX, 12)}`;

const PROVIDERS = {
  aws_access_key_id: () => `AKIA${s('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 16)}`,
  aws_secret_key: () => `aws_secret_access_key = ${s(B64, 40)}`,
  gcp_api_key: () => `AIza${s(URLSAFE, 35)}`,
  gcp_service_account: () => `"private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEv${s(B64, 60)}\\n-----END PRIVATE KEY-----\\n"`,
  azure_storage: () => `DefaultEndpointsProtocol=https;AccountName=prod${s(LOWER, 6)};AccountKey=${s(B64, 86)}==;EndpointSuffix=core.windows.net`,
  azure_client_secret: () => `${s(ALNUM, 3)}${pick('0123456789')}Q~${s(`${ALNUM}_~.-`, 34)}`,
  github_pat: () => `ghp_${s(ALNUM, 36)}`,
  github_oauth: () => `gho_${s(ALNUM, 36)}`,
  github_fine_grained: () => `github_pat_${s(ALNUM, 22)}_${s(ALNUM, 59)}`,
  gitlab_pat: () => `glpat-${s(URLSAFE, 20)}`,
  slack_bot: () => `xoxb-${s('0123456789', 12)}-${s('0123456789', 13)}-${s(ALNUM, 24)}`,
  slack_webhook: () => `https://hooks.slack.com/services/T${s(UPPER_NUM, 8)}/B${s(UPPER_NUM, 10)}/${s(ALNUM, 24)}`,
  stripe_live: () => `sk_live_${s(ALNUM, 24)}`,
  stripe_test: () => `sk_test_${s(ALNUM, 24)}`,
  stripe_restricted: () => `rk_live_${s(ALNUM, 24)}`,
  stripe_webhook: () => `whsec_${s(ALNUM, 32)}`,
  openai_legacy: () => `sk-${s(ALNUM, 20)}T3BlbkFJ${s(ALNUM, 20)}`,
  openai_project: () => `sk-proj-${s(URLSAFE, 58)}T3BlbkFJ${s(URLSAFE, 58)}`,
  anthropic: () => `sk-ant-api03-${s(URLSAFE, 93)}AA`,
  jwt: () => `${b64url({ alg: 'HS256', typ: 'JWT' })}.${b64url({ sub: s('0123456789', 8), role: 'admin', iat: 1760000000 + Math.floor(rand() * 1e6) })}.${s(URLSAFE, 43)}`,
  pem_rsa: () => `-----BEGIN RSA PRIVATE KEY-----\nMIIEow${s(B64, 64)}\n-----END RSA PRIVATE KEY-----`,
  pem_openssh: () => `-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA${s(B64, 50)}\n-----END OPENSSH PRIVATE KEY-----`,
  pem_ec: () => `-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE${s(B64, 56)}\n-----END EC PRIVATE KEY-----`,
  postgres_url: () => `postgres://${pick(['app', 'billing', 'svc_ro'])}:${s(ALNUM, 14)}@db-${s(LOWER, 5)}.internal:5432/main`,
  mysql_url: () => `mysql://root:${s(ALNUM, 12)}@10.0.${Math.floor(rand() * 255)}.${Math.floor(rand() * 255)}:3306/orders`,
  mongodb_url: () => `mongodb+srv://admin:${s(ALNUM, 16)}@cluster0.${s(LOWER, 5)}.mongodb.net/prod`,
  redis_url: () => `redis://default:${s(ALNUM, 20)}@cache.${s(LOWER, 6)}.com:6379`,
  amqp_url: () => `amqp://worker:${s(ALNUM, 12)}@rabbit.internal:5672/`,
  https_basic: () => `https://deploy:${s(ALNUM, 18)}@registry.${s(LOWER, 6)}.io/v2/`,
  connection_string: () => `Server=tcp:sql-${s(LOWER, 5)}.database.windows.net;Database=app;User Id=sa;Password=${s(ALNUM, 14)}!;`,
  password_assignment: () => `password=${s(ALNUM, 10)}${pick('!@#$%')}${s('0123456789', 2)}`,
  password_yaml: () => `db_password: "${s(ALNUM, 16)}"`,
  secret_colon: () => `secret: ${s(ALNUM, 24)}`,
  api_key_assignment: () => `API_KEY=${s(ALNUM, 32)}`,
  client_secret: () => `client_secret=${s(URLSAFE, 32)}`,
  google_oauth_secret: () => `GOCSPX-${s(URLSAFE, 28)}`,
  auth_token_env: () => `export AUTH_TOKEN=${s(HEX, 40)}`,
  high_entropy_keylike: () => `signing_key: ${s(B64, 44)}`,
  sendgrid: () => `SG.${s(URLSAFE, 22)}.${s(URLSAFE, 43)}`,
  twilio: () => `SK${s(HEX, 32)}`,
  npm: () => `npm_${s(ALNUM, 36)}`,
  pypi: () => `pypi-AgEIcHlwaS5vcmc${s(URLSAFE, 60)}`,
  mailgun: () => `key-${s(HEX, 32)}`,
  digitalocean: () => `dop_v1_${s(HEX, 64)}`,
  shopify: () => `shpat_${s(HEX, 32)}`,
  huggingface: () => `hf_${s('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz', 34)}`,
  databricks: () => `dapi${s(HEX, 32)}`,
  linear: () => `lin_api_${s(ALNUM, 40)}`,
  notion: () => `secret_${s(ALNUM, 43)}`,
  vault: () => `hvs.${s(URLSAFE, 90)}`,
  doppler: () => `dp.pt.${s(ALNUM, 43)}`,
  postman: () => `PMAK-${s(HEX, 24)}-${s(HEX, 34)}`,
  grafana: () => `glsa_${s(ALNUM, 32)}_${s(HEX, 8)}`,
  telegram: () => `${1000000000 + Math.floor(rand() * 8e9)}:AA${s(URLSAFE, 33)}`,
  square: () => `sq0atp-${s(URLSAFE, 22)}`,
  age: () => `AGE-SECRET-KEY-1${s('QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L'.toUpperCase(), 58)}`,
  supabase: () => `sbp_${s(HEX, 40)}`,
  newrelic: () => `NRAK-${s(UPPER_NUM, 27)}`,
  sentry: () => `sntrys_${s(B64, 60)}`,
  heroku: () => `HRKU-${s(URLSAFE, 60)}`,
  // Formats added after the first outside measurement (each from its vendor's documentation).
  sourcegraph: () => `sgp_${s(HEX, 16)}_${s(HEX, 40)}`,
  huggingface_org: () => `api_org_${s('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz', 34)}`,
  facebook: () => `EAAB${s(ALNUM, 140)}`,
  flyio: () => `FlyV1 fm2_${s(B64, 160)}`,
  easypost: () => `${pick(['EZAK', 'EZTK'])}${s(ALNUM, 54)}`,
  openshift: () => `sha256~${s(URLSAFE, 43)}`,
  vault_legacy: () => `VAULT_TOKEN=s.${s(ALNUM, 22)}9Q`,
  terraform_cloud: () => `${s(ALNUM, 14)}.atlasv1.${s(URLSAFE, 67)}`,
  mailchimp: () => `${s(HEX, 32)}-us${Math.floor(rand() * 20 + 1)}`,
  sidekiq: () => `BUNDLE_ENTERPRISE__CONTRIBSYS__COM=${s(HEX, 8)}:${s(HEX, 8)}`,
  nuget_config: () => `<add key="ClearTextPassword" value="${s(ALNUM, 16)}" />`,
  sonarqube: () => `sqp_${s(HEX, 40)}`,
  snyk: () => `SNYK_TOKEN=${uuidv4()}`,
  sumologic: () => `sumo_access_key: ${s(ALNUM, 64)}`,
  intra42: () => `s-s4t2ud-${s(HEX, 64)}`,
  bearer_header: () => `curl -H "Authorization: Bearer ${s(URLSAFE, 40)}" https://api.${s(LOWER, 6)}.com/v1/jobs`,
  basic_header: () => `Authorization: Basic ${Buffer.from(`${pick(['deploy', 'ci', 'admin'])}:${s(ALNUM, 14)}`).toString('base64')}`,
  token_header: () => `'Authorization': 'Token ${s(HEX, 40)}'`,
  curl_user: () => `curl -u ${pick(['admin', 'ci-bot', 'ops'])}:${s(ALNUM, 16)} https://jenkins.${s(LOWER, 5)}.internal/job/build`,
  curl_user_long: () => `curl --user "svc:${s(ALNUM, 18)}" -X POST https://registry.example.org/api`,
  k8s_secret: () => `apiVersion: v1\nkind: Secret\nmetadata:\n  name: db-creds\ntype: Opaque\ndata:\n  username: ${Buffer.from('app').toString('base64')}\n  password: ${Buffer.from(s(ALNUM, 18)).toString('base64')}`,
  k8s_string_data: () => `kind: Secret\nstringData:\n  API_TOKEN: ${s(ALNUM, 30)}`,
  makefile_assign: () => `DEPLOY_TOKEN ?= ${s(ALNUM, 32)}`,
  go_assign: () => `gitterToken := "${s(HEX, 40)}"`,
  dash_separator: () => `gitter token - '${s(HEX, 40)}'`,
  camel_assign: () => `const stripeApiKey = "${s(ALNUM, 30)}";`,
  twitter_bearer: () => `TWITTER_BEARER_TOKEN=AAAAAAAAAAAAAAAAAAAAA${s(ALNUM, 12)}%2F${s(ALNUM, 40)}%3D${s(ALNUM, 30)}`,
  docker_auth: () => `{"auths": {"ghcr.io": {"auth": "${Buffer.from(`bot:${s(ALNUM, 20)}`).toString('base64')}"}}}`,
  split_token: () => `const t = "ghp_" + "${s(ALNUM, 36)}";`,
  zero_width: () => `ghp_${s(ALNUM, 10)}\u200b${s(ALNUM, 26)}`,
  url_encoded: () => `https://api.example.org/hook?key=${encodeURIComponent(`sk_live_${s(ALNUM, 24)}`)}&v=2`,
  base64_wrapped: () => `The CI variable holds ${Buffer.from(`GITHUB_TOKEN=ghp_${s(ALNUM, 36)}`).toString('base64')} (base64).`,
  pem_body_only: () => `MIIEpAIBAAKCAQEA${s(B64, 60)}\n${s(B64, 64)}`,
  prose_password: () => `The admin password is ${s(ALNUM, 10)}${pick('!#%')}${s('0123456789', 2)} until Friday.`,
  session_url: () => `Evidence: https://dashboard.${s(LOWER, 6)}.com/report?session=${s(URLSAFE, 32)}&tab=2`,
  groq: () => `gsk_${s(ALNUM, 52)}`,
  langsmith: () => `lsv2_pt_${s(HEX, 32)}_${s(HEX, 10)}`,
  brevo: () => `xkeysib-${s(HEX, 64)}-${s(ALNUM, 16)}`,
  artifactory: () => `AKCp${s(ALNUM, 69)}`,
};

const WRAPS = [
  (t) => `The staging deploy kept failing until we set the credential to ${t} in the CI settings.`,
  (t) => `Found in the old runbook: ${t}`,
  (t) => `Config used by the billing worker:\n${t}\nRotate it after the incident.`,
  (t) => `Reproduce with curl -H "Authorization: Bearer ${t}" against the canary.`,
  (t) => `${t}`,
  (t) => `Note to self — ${t} — do not share.`,
];

const positives = [];
const hex = (n) => s(HEX, n);
for (const [provider, gen] of Object.entries(PROVIDERS)) {
  for (let i = 0; i < 2; i++) positives.push({ provider, text: pick(WRAPS)(gen()) });
}

const uuid = () => `${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}`;
const NEGATIVES = [
  () => `Fixed in commit ${hex(40)}; see the PR for details.`,
  () => `Request id ${uuid()} timed out after 30 s.`,
  () => `The image digest is sha256:${hex(64)} in the release manifest.`,
  () => `"integrity": "sha512-${s(B64, 86)}=="`,
  () => `Passwords must be rotated every 90 days and stored in Vault, never in the repo.`,
  () => `Set password=<YOUR_PASSWORD> in .env.local before running the tests.`,
  () => `Use api_key: [API_KEY] in the example config; the real one lives in the secret manager.`,
  () => `The token bucket refills at 50 tokens per second per tenant.`,
  () => `JWT access tokens expire after 15 minutes; refresh tokens after 30 days.`,
  () => `Connect with postgres://localhost:5432/app for local development.`,
  () => `Template: DATABASE_URL=postgres://\${DB_USER}:\${DB_PASSWORD}@\${DB_HOST}/app`,
  () => `AWS docs use AKIAIOSFODNN7EXAMPLE as the access key id.`,
  () => `The AWS secret in the docs is wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY, not ours.`,
  () => `Stripe test key from their docs: sk_test_4eC39HqLyjWDarjtT1zdp7dc.`,
  () => `A GitHub token looks like ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx (36 characters after the prefix).`,
  () => `secret: \${SECRET}`,
  () => `token: {{ vault_token }}`,
  () => `Ticket PROJ-${Math.floor(rand() * 9000 + 1000)} tracks the flaky auth test.`,
  () => `Upgraded minisearch to 7.${Math.floor(rand() * 9)}.${Math.floor(rand() * 9)} and yargs to 18.0.0.`,
  () => `See src/auth/token-refresh.ts line ${Math.floor(rand() * 400)} for the retry loop.`,
  () => `The secret rotation job runs nightly at 02:00 UTC.`,
  () => `password: required (min 12 characters, one digit)`,
  () => `Header color is #${hex(6)} and the accent is #${hex(6)}.`,
  () => `Deployed at ${new Date(Date.UTC(2026, 0, 1) + Math.floor(rand() * 3e10)).toISOString()} by the release bot.`,
  () => `The public key fingerprint is SHA256:${s(B64, 43)}.`,
  () => `Publishable key pk_live_${s(ALNUM, 24)} is safe to embed in the web client.`,
  () => `apiKey: process.env.OPENAI_API_KEY`,
  () => `const token = await getToken(session);`,
  () => `We store the client_secret in AWS Secrets Manager under /prod/oauth.`,
  () => `export GITHUB_TOKEN=$(gh auth token)`,
  () => `Redis runs at redis://cache.internal:6379 without auth inside the VPC.`,
  () => `The base64 of "hello world" is aGVsbG8gd29ybGQ=.`,
  () => `Cache key format: tenant:${s(LOWER, 6)}:invoice:${Math.floor(rand() * 1e6)}`,
  () => `Use the placeholder sk-your-api-key-here in the README.`,
  () => `Link: https://github.com/acme/billing/blob/${hex(40)}/src/retry.ts#L10-L20`,
  () => `The session id cookie is HttpOnly and SameSite=Lax.`,
  () => `Latency p99 dropped from 840 ms to 210 ms after the index change.`,
  () => `auth: oauth2 with PKCE; the private key never leaves the HSM.`,
  () => `Run "npm token list" to see which tokens exist, then revoke the old ones.`,
  () => `Error: invalid_grant (refresh token revoked) from the identity provider.`,
];
// Hard negatives added with the formats above: shaped like secrets, or beside key-like names,
// and yet not secrets (the kinds of text a scanner must not refuse).
NEGATIVES.push(
  () => `API_KEY=\nOTHER_SETTING=enabled-for-all`,
  () => `-----BEGIN PRIVATE KEY-----\n-----END PRIVATE KEY-----`,
  () => `CREDENTIALS_ID = "K8S_CRED"`,
  () => `credentialsId: '${uuid()}'`,
  () => `public_key: ${s(B64, 44)}`,
  () => `postgres://user:password@localhost:5432/app`,
  () => `password: 1234567890`,
  () => `api_key = abcdefghijklmnop`,
  () => `Slack ids look like xoxb-12345-abcd234 in the docs.`,
  () => `"resolved": "https://registry.npmjs.org/yargs/-/yargs-17.7.2.tgz"`,
  () => `golang.org/x/crypto v0.21.0 h1:${s(B64, 43)}=`,
  () => `kind: ConfigMap\ndata:\n  LOG_LEVEL: debug\n  FEATURE_FLAGS: ${s(B64, 24)}`,
  () => `secretName: tls-${s(LOWER, 6)}`,
  () => `variable "db_password" {\n  type      = string\n  sensitive = true\n}`,
  () => `password: \${{ secrets.DB_PASSWORD }}`,
  () => `Authorization: Bearer \${TOKEN}`,
  () => `Authorization: Bearer <token>`,
  () => `curl -u "$USER:$PASS" https://ci.internal/api`,
  () => `api_key = os.environ["API_KEY"]`,
  () => `The header was ${Buffer.from('{"alg":"RS256","kid":"2024-rotation"}').toString('base64url')} only.`,
  () => `Encoded notice: ${Buffer.from('Maintenance window is Sunday 02:00-04:00 UTC for the billing cluster.').toString('base64')}`,
  () => `token_url: https://auth.${s(LOWER, 6)}.com/oauth/token`,
  () => `password_file: /run/secrets/db_password`,
  () => `TOKEN_TTL=3600`,
  () => `user.name = s.getUserNameFromSession`,
  () => `The image is ghcr.io/acme/api@sha256:${hex(64)}.`,
  () => `Checksum ${hex(64)}  release.tar.gz`,
  () => `data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk${s(B64, 20)}AAAAASUVORK5CYII=`,
  () => `Bearer tokens are passed in the Authorization header, never in query strings.`,
  () => `Use Basic auth only over TLS; the realm is "ci".`,
  () => `"auth": "oauth2"`,
  () => `The password is stored as a bcrypt hash with cost 12.`,
  () => `signing_key_id: ${uuid()}`,
  () => `ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI${s(B64, 43)} ci@build`,
  () => `pk_test_${s(ALNUM, 24)} is the publishable test key for the checkout page.`,
  () => `We moved the token to the secret store; the new path is kv/prod/api.`,
  () => `Set FOO_TOKEN ?= $(shell cat .token) in the Makefile.`,
  () => `const apiKey = config.get('stripe.apiKey');`,
  () => `password = getpass.getpass("Password: ")`,
  () => `https://example.org/search?q=session+timeout&page=2`,
);
const negatives = [];
for (let i = 0; i < 240; i++) negatives.push({ kind: `negative-${i % NEGATIVES.length}`, text: NEGATIVES[i % NEGATIVES.length]() });

// The structured and context families come from their own sections (each sample names its family).
for (const section of [structured(), context()]) {
  positives.push(...section.positives);
  negatives.push(...section.negatives);
}

const out = join(dirname(fileURLToPath(import.meta.url)), '../test/fixtures/secrets/corpus.json');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify({ note: 'Generated by scripts/gen-secret-corpus.js from public token formats; every value is random, none is a real credential.', positives, negatives }, null, 1)}\n`);
console.log(`wrote ${positives.length} positive and ${negatives.length} negative samples to ${out}`);
