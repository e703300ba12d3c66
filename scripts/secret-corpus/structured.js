// Corpus section for the structured credentials (src/core/secret-rules/structured.ts): JWTs,
// connection strings, Basic authorization, curl's user option, Kubernetes Secrets, docker's
// config and other tool configs. Each family has as many hard negatives as positives: the same
// shapes holding placeholders, variables, public values or documentation defaults.
import { ALNUM, B64, HEX, LOWER, URLSAFE, b64, b64url, generator, samples } from './util.js';

const { pick, s, rand } = generator(20261126);
const pw = () => `${s(ALNUM, 12)}${pick(['!', '#', '%', '_', ''])}${s('0123456789', 2)}`;
const host = () => `${pick(['db', 'pg', 'sql', 'cache', 'mq'])}-${s(LOWER, 5)}.${pick(['internal', 'prod.acme.io', 'eu-west-1.rds.amazonaws.com'])}`;
const jwt = (alg = pick(['HS256', 'RS256', 'ES256'])) =>
  `${b64url({ alg, typ: 'JWT', ...(alg === 'HS256' ? {} : { kid: s(HEX, 12) }) })}.${b64url({ sub: s('0123456789', 9), email: `${s(LOWER, 6)}@acme.io`, scope: 'read write', exp: 1790000000 + Math.floor(rand() * 1e7) })}.${s(URLSAFE, alg === 'HS256' ? 43 : 86)}`;

const families = {
  jwt: {
    pos: [
      () => `curl -H "Authorization: Bearer ${jwt()}" https://api.acme.io/v2/orders`,
      () => `Set-Cookie: session=${jwt('HS256')}; Path=/; HttpOnly`,
      () => `{"id_token": "${jwt('RS256')}", "token_type": "Bearer"}`,
      () => `The failing request carried ${jwt()} — the exp claim was in the past.`,
      () => `unsigned test token: ${b64url({ alg: 'none', typ: 'JWT' })}.${b64url({ sub: s('0123456789', 6), admin: true })}.`,
      () => `JWE from the identity broker: ${b64url({ alg: 'RSA-OAEP', enc: 'A256GCM' })}.${s(URLSAFE, 342)}.${s(URLSAFE, 16)}.${s(URLSAFE, 120)}.${s(URLSAFE, 22)}`,
    ],
    neg: [
      () => `The JWT header is ${b64url({ alg: 'RS256', typ: 'JWT' })} — always RS256 since the migration.`,
      () => `The jwt.io example eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c decodes fine.`,
      () => `Pagination cursor: ${b64url({ page: Math.floor(rand() * 90), size: 50 })}.${b64url({ sort: 'created_at' })}.v2`,
      () => `Authorization: Bearer <jwt>`,
      () => `A token looks like eyJhbGciOi...<payload>...<signature>, three base64url parts.`,
      () => `const token = jwt.sign({ sub: user.id }, process.env.JWT_SECRET, { expiresIn: '1h' });`,
    ],
  },
  'connection-string': {
    pos: [
      () => `DATABASE_URL=postgresql+psycopg2://billing:${pw()}@${host()}:5432/billing`,
      () => `mongodb+srv://app-rw:${pw()}@cluster0.${s(LOWER, 5)}.mongodb.net/prod?retryWrites=true`,
      () => `REDIS_URL=rediss://:${s(ALNUM, 24)}@${host()}:6380/0`,
      () => `spring.datasource.url=jdbc:postgresql://${host()}:5432/app?user=app&password=${pw()}&sslmode=require`,
      () => `"ConnectionStrings": { "Main": "Server=tcp:${s(LOWER, 6)}.database.windows.net,1433;Initial Catalog=app;User ID=appsvc;Pwd=${pw()};Encrypt=True;" }`,
      () => `jdbc:oracle:thin:scott/${pw()}@//${host()}:1521/ORCLPDB1`,
      () => `SMTP relay: smtps://alerts%40acme.io:${pw()}@smtp.${s(LOWER, 6)}.com:465`,
    ],
    neg: [
      () => `postgres://user:password@localhost:5432/app`,
      () => `DATABASE_URL=postgres://\${DB_USER}:\${DB_PASSWORD}@${host()}:5432/app`,
      () => `mysql://root:@127.0.0.1:3306/test`,
      () => `amqp://guest:guest@localhost:5672/`,
      () => `Server=${host()};Database=app;Integrated Security=true;TrustServerCertificate=True`,
      () => `jdbc:postgresql://${host()}:5432/app?user=app&password=$PGPASSWORD`,
      () => `redis://${host()}:6379/0 (no auth inside the VPC)`,
    ],
  },
  'basic-auth': {
    pos: [
      () => `curl -H 'Authorization: Basic ${b64(`deploy:${pw()}`)}' https://nexus.acme.io/repository/`,
      () => `GET /api/v1/jobs HTTP/1.1\r\nHost: ci.acme.io\r\nauthorization: basic ${b64(`ci-bot:${pw()}`)}\r\n`,
      () => `headers = {"Authorization": "Basic ${b64(`svc_reports:${pw()}`)}", "Accept": "application/json"}`,
      () => `resp = requests.get(url, auth=HTTPBasicAuth("jenkins", "${pw()}"))`,
      () => `fetch(url, { headers: { Authorization: 'Basic ' + btoa('grafana:${pw()}') } })`,
      () => `Proxy-Authorization: BASIC ${b64(`proxyuser:${pw()}`)}`,
    ],
    neg: [
      () => `Authorization: Basic dXNlcjpwYXNzd29yZA==`,
      () => `headers: { Authorization: \`Basic \${btoa(user + ':' + pass)}\` }`,
      () => `WWW-Authenticate: Basic realm="artifact upload"`,
      () => `resp = requests.get(url, auth=(os.environ["CI_USER"], os.environ["CI_PASSWORD"]))`,
      () => `Authorization: Basic YWRtaW46YWRtaW4= is what the vendor's docs show for the default admin.`,
      () => `Basic auth stays disabled on the public ingress; only the VPN listener accepts it.`,
    ],
  },
  'curl-user': {
    pos: [
      () => `curl -u admin:${pw()} https://jenkins.${s(LOWER, 5)}.internal/job/release/build`,
      () => `curl -s --user=release-bot:${pw()} -X PUT --data-binary @app.tgz https://artifacts.acme.io/`,
      () => `curl -sS -uops:${pw()} https://grafana.acme.io/api/dashboards`,
      () => `curl https://api.stripe.com/v1/charges \\\n  -u ${s(ALNUM, 32)}: \\\n  -d amount=2000`,
      () => `http -a monitor:${pw()} GET https://status.acme.io/api/checks`,
    ],
    neg: [
      () => `curl -u "$CI_USER:$CI_TOKEN" https://ci.acme.io/api`,
      () => `curl -u user:password https://httpbin.org/basic-auth/user/password`,
      () => `curl -u admin https://jenkins.acme.io/ (curl prompts for the password)`,
      () => `curl --user "\${NEXUS_USER}:\${NEXUS_PASSWORD}" -T app.tgz https://nexus.acme.io/`,
      () => `curl -u elastic:changeme http://localhost:9200/_cluster/health`,
    ],
  },
  kubernetes: {
    pos: [
      () => `apiVersion: v1\nkind: Secret\nmetadata:\n  name: billing-db\ntype: Opaque\ndata:\n  username: ${b64('billing')}\n  password: ${b64(pw())}`,
      () => `kind: Secret\napiVersion: v1\nmetadata:\n  name: smtp\nstringData:\n  SMTP_PASSWORD: "${pw()}"`,
      () => `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"api"},"data":{"token":"${b64(s(ALNUM, 32))}"}}`,
      () => `kind: Secret\ntype: kubernetes.io/dockerconfigjson\ndata:\n  .dockerconfigjson: ${b64(JSON.stringify({ auths: { 'ghcr.io': { auth: b64(`bot:${s(ALNUM, 20)}`) } } }))}`,
    ],
    neg: [
      () => `kind: ConfigMap\ndata:\n  LOG_LEVEL: ${b64('debug')}\n  REGION: eu-west-1`,
      () => `kind: Secret\nmetadata:\n  name: demo\ndata:\n  username: ${b64('admin')}\n  password: ${b64('password')}`,
      () => `kind: Secret\nstringData:\n  DB_PASSWORD: \${DB_PASSWORD}\n  API_TOKEN: "<filled in by the pipeline>"`,
      () => `kind: Secret\nmetadata:\n  name: tls-ingress\ndata:\n  tls.crt: ${b64(`-----BEGIN CERTIFICATE-----\nMIIC${s(B64, 60)}\n-----END CERTIFICATE-----`)}`,
    ],
  },
  'docker-config': {
    pos: [
      () => `{\n  "auths": {\n    "registry.gitlab.com": { "auth": "${b64(`deployer:${s(ALNUM, 20)}`)}" }\n  }\n}`,
      () => `{"auths":{"${s(LOWER, 8)}.azurecr.io":{"identitytoken":"${s(URLSAFE, 40)}.${s(URLSAFE, 60)}"}}}`,
      () => `DOCKER_AUTH_CONFIG: "{\\"auths\\":{\\"ghcr.io\\":{\\"auth\\":\\"${b64(`ci:${s(ALNUM, 24)}`)}\\"}}}"`,
    ],
    neg: [
      () => `{"auths": {"ghcr.io": {}}, "credsStore": "desktop"}`,
      () => `{"auths": {"https://index.docker.io/v1/": {"auth": ""}}}`,
      () => `"auth": "${b64('user:password')}"`,
      () => `The docker config keeps "auth" only when no credential helper is set.`,
    ],
  },
  'tool-config': {
    pos: [
      () => `~/.npmrc:\n//registry.npmjs.org/:_authToken=${s(HEX, 8)}-${s(HEX, 4)}-${s(HEX, 4)}-${s(HEX, 4)}-${s(HEX, 12)}`,
      () => `.npmrc for the private feed:\n_auth=${b64(`feed:${pw()}`)}\nalways-auth=true`,
      () => `~/.netrc\nmachine api.heroku.com\n  login ops@acme.io\n  password ${s(HEX, 8)}-${s(HEX, 4)}-${s(HEX, 4)}-${s(HEX, 4)}-${s(HEX, 12)}`,
      () => `[pypi]\nusername = __token__\npassword = ${pw()}${s(ALNUM, 8)}`,
    ],
    neg: [
      () => `//registry.npmjs.org/:_authToken=\${NPM_TOKEN}`,
      () => `machine github.com login octocat password <personal-access-token>`,
      () => `[pypi]\nusername = __token__\npassword = %(PYPI_TOKEN)s`,
      () => `.netrc lines read "machine <host> login <user> password <secret>"; keep the file mode 600.`,
    ],
  },
};

/** The section's samples (its own seeded values; the main generator's helpers are not needed). */
export const corpus = () => samples(families);
export default corpus;
