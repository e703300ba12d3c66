#!/usr/bin/env node
// Writes test/fixtures/secrets/corpus.json: positive samples built from the public token formats
// of each provider (random values, deterministic seed) inside the kind of prose an agent writes,
// and negative samples that look key-ish but are not secrets (hashes, ids, placeholders,
// documented example keys, prose about passwords and tokens). `npm run eval:secrets` measures
// recall and false positives on it; test/unit/secrets.test.ts holds the targets.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

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
for (const [provider, gen] of Object.entries(PROVIDERS)) {
  for (let i = 0; i < 2; i++) positives.push({ provider, text: pick(WRAPS)(gen()) });
}

const hex = (n) => s(HEX, n);
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
const negatives = [];
for (let i = 0; i < 120; i++) negatives.push({ kind: `negative-${i % NEGATIVES.length}`, text: NEGATIVES[i % NEGATIVES.length]() });

const out = join(dirname(fileURLToPath(import.meta.url)), '../test/fixtures/secrets/corpus.json');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify({ note: 'Generated by scripts/gen-secret-corpus.js from public token formats; every value is random, none is a real credential.', positives, negatives }, null, 1)}\n`);
console.log(`wrote ${positives.length} positive and ${negatives.length} negative samples to ${out}`);
