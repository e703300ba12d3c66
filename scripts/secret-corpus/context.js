// Corpus section for the context rules (src/core/secret-rules/context.ts and provider-context.ts):
// a key-like name beside a random value in the syntaxes of many languages and config formats,
// and a service's name a few words before a token that has no fixed prefix. The hard negatives,
// as many as the positives, put the same names beside references, placeholders, test values,
// words, paths, versions and ids, and the same service names beside hashes, ids and public keys.
import { ALNUM, B64, HEX, LOWER, URLSAFE, b64, generator, samples } from './util.js';

const { pick, s } = generator(20261127);
const tok = (n = 32) => s(ALNUM, n);
const pw = () => `${s(ALNUM, 14)}${pick(['!', '#', '@', '$', ''])}${s('0123456789', 2)}`;
const uuid = () => `${s(HEX, 8)}-${s(HEX, 4)}-4${s(HEX, 3)}-b${s(HEX, 3)}-${s(HEX, 12)}`;

const families = {
  'key-assignment': {
    pos: [
      () => `STRIPE_SECRET_KEY = "${tok(40)}"`,
      () => `    api_key: str = "${tok(32)}"`,
      () => `os.environ["SENDGRID_API_KEY"] = "${s(URLSAFE, 40)}"`,
      () => `client = Client(api_token="${s(HEX, 40)}", timeout=30)`,
      () => `export const API_SECRET_KEY: string = '${tok(36)}';`,
      () => `const config = { apiKey: "${tok(39)}", region: "eu-central-1" };`,
      () => `var deployToken string = "${s(HEX, 40)}"`,
      () => `os.Setenv("SLACK_SIGNING_SECRET", "${s(HEX, 32)}")`,
      () => `private static final String PAYMENT_API_KEY = "${tok(32)}";`,
      () => `props.setProperty("db.password", "${pw()}");`,
      () => `public const string ClientSecret = "${s(URLSAFE, 34)}";`,
      () => `<add key="PaymentGatewayApiKey" value="${tok(32)}" />`,
      () => `config.secret_key_base = "${s(HEX, 64)}"`,
      () => `define('AUTH_KEY', '${s(B64, 48)}');`,
      () => `$dbPassword = '${pw()}';`,
      () => `const API_TOKEN: &str = "${tok(40)}";`,
      () => `let refreshToken: String = "${s(URLSAFE, 48)}"`,
      () => `export OPENROUTER_API_KEY=${tok(48)}`,
      () => `mysqldump --user=backup --password ${pw()} billing > dump.sql`,
      () => `[service]\napi_token = "${tok(40)}"`,
      () => `<configuration>\n  <apiKey>${tok(32)}</apiKey>\n</configuration>`,
      () => `ENV PGPASSWORD ${pw()}`,
      () => `MAILGUN_SIGNING_KEY=${s(HEX, 32)}`,
      () => `Map("api_key" -> "${tok(32)}", "region" -> "us")`,
      () => `"client_secret": "${s(URLSAFE, 40)}",`,
      () => `  dbpassword: ${pw()}`,
    ],
    neg: [
      () => `api_key = os.getenv("API_KEY")`,
      () => `const token = await getToken(scope);`,
      () => `apiKey: process.env.STRIPE_SECRET_KEY,`,
      () => `API_KEY = settings.STRIPE_API_KEY`,
      () => `password: "password123"`,
      () => `token: "abcdef123"`,
      () => `api_key = "test_api_key"`,
      () => `  GITHUB_TOKEN: \${{ secrets.GITHUB_TOKEN }}`,
      () => `token_type = "bearer"`,
      () => `max_tokens = 4096`,
      () => `client_secret_path = "/etc/app/client_secret.json"`,
      () => `apiKeyHeader = "X-Api-Key"`,
      () => `secret_key = f"{prefix}-{suffix}"`,
      () => `API_TOKEN="%s"`,
      () => `token = "v1.2.3-rc.1"`,
      () => `secret: ${b64('this value is not a secret at all')}`,
      () => `privateKey = fs.readFileSync("./keys/private.pem")`,
      () => `ApiKey = Configuration["Stripe:ApiKey"];`,
      () => `accessToken = response.data.access_token`,
      () => `<apiKey>\${env.API_KEY}</apiKey>`,
      () => `tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")`,
      () => `SECRET_KEY_FILE=/run/secrets/django_secret_key`,
      () => `db_password = DatabasePassword`,
      () => `secret_name = "prod/billing/${s(LOWER, 6)}"`,
      () => `password = "Secret123!"`,
      () => `--api-key <your-api-key>`,
    ],
  },
  'provider-context': {
    pos: [
      () => `The Abyssale credentials for the staging workspace: ${tok(40)}`,
      () => `[INFO] Sending request to the Geocodio API\n[DEBUG] Using key ${s(HEX, 39)}x`,
      () => `mailjet:\n  key: ${s(HEX, 32)}\n  secret: ${s(HEX, 32)}`,
      () => `https://api.weatherstack.com/current?access_key=${s(HEX, 32)}&query=Berlin`,
      () => `Zendesk token for the support bot -> ${tok(40)}`,
      () => `PagerDuty: routing ${tok(32)} (the integration for the billing service)`,
      () => `Calendly personal token ${s(URLSAFE, 20)}${s('0123456789', 4)}${s(URLSAFE, 20)}`,
      () => `new HubSpotClient({ accessToken: "${s(HEX, 8)}-${s(HEX, 4)}-${s(HEX, 4)}-${s(HEX, 4)}-${s(HEX, 12)}" })`,
      () => `We rotated the Browserstack access ${tok(20)} after the leak.`,
      () => `Algolia admin key for the EU app: ${s(HEX, 32)} (search-only keys are fine to share, this one is not).`,
    ],
    neg: [
      () => `Sentry issue ${s(HEX, 32)} is resolved.`,
      () => `Fixed the Mailjet webhook in commit ${s(HEX, 40)}.`,
      () => `Stripe customer id: cus_${tok(14)}`,
      () => `Twilio request ${uuid()} failed with 429.`,
      () => `Upgraded the PagerDuty client to version 2.14.0-beta.3 and the Zendesk one to 4.1.0.`,
      () => `The Algolia index products_v2_staging_replica_price_asc is rebuilt nightly.`,
      () => `Netlify build ${s(HEX, 24)} deployed the preview.`,
      () => `The Stripe publishable key pk_live_${tok(24)} is in the checkout page (public by design).`,
      () => `HubSpot portal 24681357, form guid ${uuid()}`,
      () => `Cloudinary asset acme/products/summer_2024/blue_sneaker_side_view_large.jpg`,
    ],
  },
};

/** The section's samples (its own seeded values; the main generator's helpers are not needed). */
export const corpus = () => samples(families);
export default corpus;
