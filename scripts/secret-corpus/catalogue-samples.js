// One sample value (or line) per catalogue rule, written from each provider's documented token
// shape: `rule-id | template`. In a template, {hex:N} is N random lower-case hex digits, {HEX:N}
// upper-case hex, {an:N} letters and digits, {up:N} upper-case letters and digits, {UP:N}
// upper-case letters, {lo:N} lower-case letters, {ln:N} lower-case letters and digits, {num:N}
// digits, {b64:N} base64, {url:N} base64url, {b32:N} lower-case base32, {uuid} and {UUID};
// {dcpat} is an Atlassian Data Center token (base64 of a 12-digit id, a colon, 20 random bytes).
export const SAMPLES = `
aws-access-key-id | AKIA{b32U:16}
aws-secret-access-key | aws_secret_access_key = {b64:40}
aws-session-token | aws_session_token = IQoJb3JpZ2luX2Vj{b64:300}
aws-bedrock-api-key | AWS_BEARER_TOKEN_BEDROCK=ABSKQmVkcm9ja0FQSUtleS{b64:120}
aws-mws-key | amzn.mws.{uuid}
gcp-api-key | AIza{url:35}
google-oauth-client-secret | GOCSPX-{url:28}
google-oauth-access-token | ya29.a0{url:150}
google-oauth-refresh-token | "refresh_token": "1//0{url:100}"
firebase-cloud-messaging-key | AAAA{url:7}:APA91b{url:134}
azure-storage-key | DefaultEndpointsProtocol=https;AccountName=logs{lo:6};AccountKey={b64:86}==;EndpointSuffix=core.windows.net
azure-storage-identifiable-key | storage key {b64:76}+ASt{b64:5}Q==
azure-cosmosdb-key | COSMOS_KEY={b64:76}ACDb{b64:5}w==
azure-function-key | x-functions-key: {url:44}AzFu{url:5}A==
azure-search-key | api-key: {an:42}AzSe{an:6}
azure-apim-key | Ocp-Apim-Subscription-Key: {an:76}APIM{an:5}g==
azure-event-hub-key | SharedAccessKey={b64:33}+AEh{b64:5}=
azure-container-registry-key | docker login myreg.azurecr.io -p {b64:42}+ACR{an:6}
azure-cache-redis-key | redis password {an:33}AzCa{an:5}=
azure-devops-pat | AZURE_DEVOPS_EXT_PAT={an:52}JQQJ99{an:18}AZDO{an:4}
azure-annotated-key | AZURE_OPENAI_API_KEY={an:52}JQQJ99BD{an:16}A{an:7}
azure-client-secret | {an:3}8Q~{an:34}
azure-sas-signature | https://acct.blob.core.windows.net/c/f.txt?sv=2022-11-02&se=2026-12-01&sr=b&sp=r&sig={b64:43}%3D
azure-app-config-secret | Endpoint=https://cfg-{lo:5}.azconfig.io;Id={an:4}-l0-s0:{an:20};Secret={b64:44}
alibaba-access-key-id | LTAI{an:20}
tencent-secret-id | SecretId: AKID{an:32}
ibm-cloud-api-key | IBM_CLOUD_API_KEY={url:44}
ibm-cos-hmac-secret | "secret_access_key": "{hex:48}"
ibm-cloudant-password | cloudant_password = {hex:64}
softlayer-api-key | SOFTLAYER_API_KEY={ln:64}
softlayer-api-url-key | https://api.softlayer.com/soap/v3/{ln:64}
yandex-token | YC_IAM_TOKEN=t1.9euelZ{url:20}.{url:86}
scaleway-access-key | SCW_ACCESS_KEY=SCW{up:17}
digitalocean-token | dop_v1_{hex:64}
openshift-token | oc login --token=sha256~{url:43} --server=https://api.c1.example.org:6443
flyio-token | FLY_API_TOKEN=FlyV1 fm2_{b64:200}
heroku-key | HRKU-AA{url:58}
heroku-api-key | HEROKU_API_KEY={uuid}
cloudflare-token | CLOUDFLARE_API_TOKEN={url:40}
cloudflare-global-api-key | CF_API_KEY={hex:37}
cloudflare-api-key-v2 | cfk_{an:40}{hex:8}
cloudflare-origin-ca-key | v1.0-{hex:24}-{hex:146}
terraform-cloud-token | {an:14}.atlasv1.{url:67}
vault-token | VAULT_TOKEN=hvs.{url:90}
vault-legacy-token | vault login s.{an:22}7Q
doppler-token | DOPPLER_TOKEN=dp.st.prd.{an:40}
infisical-token | INFISICAL_TOKEN=st.{uuid}.{hex:32}.{hex:32}
bitwarden-access-token | BWS_ACCESS_TOKEN=0.{uuid}.{an:30}:{b64:22}==
onepassword-secret-key | A3-{up:6}-{up:6}-{up:5}-{up:5}-{up:5}-{up:5}
pulumi-token | PULUMI_ACCESS_TOKEN=pul-{hex:40}
dynatrace-token | dt0c01.{up:24}.{up:64}
artifactory-token | AKCp{an:69}
jfrog-identity-token | JFROG_ACCESS_TOKEN={an:64}
harness-token | pat.{url:22}.{hex:24}.{an:20}
render-key | rnd_{an:32}
netlify-token | NETLIFY_AUTH_TOKEN=nfp_{an:36}
vercel-token | VERCEL_TOKEN=vcp_{an:56}
vercel-legacy-token | vercel_token: {an:24}
scalingo-token | tk-us-{url:48}
tailscale-key | TS_AUTHKEY=tskey-auth-{an:12}-{an:33}
docker-hub-token | docker login -u ci -p dckr_pat_{url:27}
defined-networking-key | dnkey-{ln:26}-{ln:52}
okta-token | OKTA_API_TOKEN=00{url:40}
salesforce-access-token | 00D{an:15}!{an:100}
salesforce-consumer-key | SF_CONSUMER_KEY=3MVG9{an:80}
supabase-token | SUPABASE_ACCESS_TOKEN=sbp_{hex:40}
fleetbase-key | flb_live_{an:20}
saladcloud-key | salad_cloud_{an:5}_{an:40}
hashicorp-cloud-secret | HCP_CLIENT_SECRET={url:64}
github-token | ghp_{an:36}
github-fine-grained-token | github_pat_{an:22}_{an:59}
gitlab-token | glpat-{url:20}
gitlab-runner-token | glrt-t1_{url:20}
bitbucket-app-password | ATBB{an:32}
bitbucket-access-token | ATCTT3xFfG{url:180}={an:8}
atlassian-token | ATATT3xFfGF0{url:170}={HEX:8}
atlassian-data-center-token | BBDC-{an:44}
gitea-token | GITEA_TOKEN={hex:40}
sourcegraph-token | sgp_{hex:16}_{hex:40}
sourcegraph-cody-token | slk_{hex:64}
npm-token | //registry.npmjs.org/:_authToken=npm_{an:36}
pypi-token | pypi-AgEIcHlwaS5vcmc{url:70}
rubygems-key | GEM_HOST_API_KEY=rubygems_{hex:48}
nuget-api-key | dotnet nuget push pkg.nupkg --api-key oy2{ln:43}
nuget-config-password | <add key="ClearTextPassword" value="{an:20}" />
clojars-token | CLOJARS_{ln:60}
crates-io-token | CARGO_REGISTRY_TOKEN=cio{an:32}
sidekiq-credentials | BUNDLE_GEMS__CONTRIBSYS__COM={hex:8}:{hex:8}
sidekiq-url | source "https://{hex:8}:{hex:8}@gems.contribsys.com/"
postman-key | PMAK-{hex:24}-{hex:34}
figma-token | FIGMA_TOKEN=figd_{url:40}
readme-key | rdme_{ln:70}
octopus-deploy-key | API-{up:26}
prefect-token | pnu_{an:36}
intra42-secret | s-s4t2ud-{hex:64}
infracost-key | ico-{an:32}
apify-token | apify_api_{an:36}
trufflehog-enterprise-key | thog-secret-{hex:32}
endor-labs-key | endr+{an:16}
settlemint-token | sm_pat_{an:16}
circleci-token | CCIPAT_{an:22}_{hex:40}
circleci-legacy-token | CIRCLECI_TOKEN={hex:40}
buildkite-token | BUILDKITE_API_TOKEN=bkua_{ln:40}
teamcity-token | eyJ0eXAiOiAiVENWMiJ9.{url:40}.{url:60}
travis-token | TRAVIS_API_TOKEN={an:22}
drone-token | DRONE_TOKEN={an:32}
jenkins-api-token | JENKINS_API_TOKEN=11{hex:32}
codecov-token | CODECOV_TOKEN: {uuid}
codecov-cli-token | bash <(curl -s https://codecov.io/bash) -t {uuid}
codecov-url-token | https://codecov.io/upload/v4?commit=abc&token={uuid}
sonarqube-token | sqp_{hex:40}
sonarcloud-token | sqco_{an:59}
sonar-token | sonar.token={url:40}
sonar-cli-token | mvn sonar:sonar -Dsonar.login={hex:40}
snyk-token | SNYK_TOKEN={uuid}
snyk-cli-token | snyk auth {uuid}
code-climate-reporter-id | CC_TEST_REPORTER_ID: {hex:64}
coveralls-token | repo_token: {an:32}
deepsource-dsn | DEEPSOURCE_DSN=https://{hex:32}@app.deepsource.com
deepsource-token | dsp_{hex:40}
codacy-token | CODACY_PROJECT_TOKEN={an:32}
semgrep-token | SEMGREP_APP_TOKEN={hex:64}
chromatic-token | npx chromatic --project-token=chpt_{hex:14}
percy-token | PERCY_TOKEN=web_{hex:64}
cypress-record-key | npx cypress run --record --key {uuid}
browserstack-key | BROWSERSTACK_ACCESS_KEY={an:20}
saucelabs-key | SAUCE_ACCESS_KEY={uuid}
lambdatest-key | LT_ACCESS_KEY={an:50}
appveyor-token | APPVEYOR_API_TOKEN=v2.{ln:20}
bitrise-token | BITRISE_TOKEN={url:86}
gitguardian-token | GITGUARDIAN_API_KEY={an:71}
slack-token | xoxb-{num:12}-{num:13}-{an:24}
slack-legacy-token | xoxs-{num:12}-{num:12}-{num:12}-{hex:64}
slack-config-token | xoxe.xoxp-1-{an:160}
slack-cookie-token | d=xoxd-{url:120}
slack-webhook | https://hooks.slack.com/services/T{up:8}/B{up:10}/{an:24}
discord-webhook | https://discord.com/api/webhooks/{num:18}/{url:68}
discord-bot-token | DISCORD_TOKEN=M{url:23}.{url:6}.{url:27}
discord-client-secret | DISCORD_CLIENT_SECRET={url:32}
telegram-bot-token | {num:10}:AA{url:33}
teams-incoming-webhook | https://contoso.webhook.office.com/webhookb2/{uuid}@{uuid}/IncomingWebhook/{hex:32}/{uuid}
power-automate-webhook | https://prod-12.westus.logic.azure.com:443/workflows/{hex:32}/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={url:43}
google-chat-webhook | https://chat.googleapis.com/v1/spaces/AAAA{url:7}/messages?key=AIza{url:35}&token={url:43}%3D
mattermost-webhook | https://chat.acme.io/hooks/{ln:26}
mattermost-token | MATTERMOST_TOKEN={ln:26}
rocketchat-webhook | https://rocket.acme.io/hooks/{an:17}/{an:48}
zapier-webhook | https://hooks.zapier.com/hooks/catch/{num:7}/{ln:6}/
ifttt-webhook-key | https://maker.ifttt.com/trigger/door_open/with/key/{url:22}
make-webhook | https://hook.eu1.make.com/{ln:32}
tines-webhook | https://acme-corp.tines.com/webhook/{ln:32}/{ln:32}
feishu-lark-webhook | https://open.feishu.cn/open-apis/bot/v2/hook/{uuid}
dingtalk-webhook | https://oapi.dingtalk.com/robot/send?access_token={hex:64}
wecom-webhook | https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key={uuid}
gitter-token | gitter_token: {ln:40}
webex-bot-token | WEBEX_BOT_TOKEN={an:64}_{an:4}_{uuid}
line-channel-token | LINE_CHANNEL_ACCESS_TOKEN={b64:172}=
intercom-token | INTERCOM_ACCESS_TOKEN={url:60}
sendbird-token | SENDBIRD_API_TOKEN={hex:40}
pusher-secret | PUSHER_APP_SECRET={hex:20}
ably-key | ABLY_API_KEY={url:6}.{url:6}:{url:43}
zoom-jwt-secret | ZOOM_CLIENT_SECRET={an:36}
stripe-key | sk_live_{an:24}
stripe-webhook-secret | whsec_{an:32}
stripe-client-secret | pi_{an:24}_secret_{an:25}
square-token | sq0csp-{url:43}
braintree-access-token | access_token\$production\${ln:16}\${hex:32}
paypal-secret | PAYPAL_CLIENT_SECRET={url:80}
shopify-token | shpat_{hex:32}
shippo-token | shippo_live_{hex:40}
easypost-key | EZAK{an:54}
duffel-token | duffel_live_{url:43}
plaid-token | access-production-{uuid}
plaid-secret | PLAID_SECRET={hex:30}
razorpay-key | rzp_live_{an:14}
razorpay-secret | RAZORPAY_KEY_SECRET={an:24}
flutterwave-key | FLWSECK-{hex:32}-X
gocardless-token | GOCARDLESS_ACCESS_TOKEN=live_{url:40}
lob-key | LOB_API_KEY=live_{hex:35}
mollie-key | MOLLIE_API_KEY=live_{an:30}
paddle-key | pdl_live_apikey_{ln:26}_{an:22}_{an:3}
pagarme-key | ak_live_{an:30}
ramp-key | ramp_sec_{an:48}
mercury-token | secret-token:mercury_production_wma_{an:50}
checkout-secret-key | sk_sbox_{b32:26}
klaviyo-private-key | pk_{hex:34}
coinbase-key | COINBASE_API_SECRET={url:64}
coinbase-cdp-key-name | organizations/{uuid}/apiKeys/{uuid}
kraken-key | KRAKEN_PRIVATE_KEY={b64:86}==
kucoin-key | KUCOIN_API_KEY={hex:24}
bittrex-key | BITTREX_API_SECRET={an:32}
binance-key | BINANCE_SECRET_KEY={an:64}
robinhood-crypto-key | rh-api-{uuid}
alpaca-key | APCA_API_KEY_ID=PK{up:18}
finicity-secret | FINICITY_APP_KEY={hex:32}
adyen-key | ADYEN_API_KEY=AQEyhmfxK{url:150}
onfido-token | api_live.{url:11}.{url:32}
persona-key | persona_production_{uuid}
grafana-token | glsa_{an:32}_{hex:8}
grafana-api-key | eyJrIjoi{an:80}
newrelic-key | NRAK-{up:27}
newrelic-license-key | NEW_RELIC_LICENSE_KEY={hex:36}NRAL
sentry-token | sntryu_{hex:64}
sentry-legacy-token | SENTRY_AUTH_TOKEN={hex:64}
datadog-key | DD_API_KEY={hex:32}
dynatrace-token-legacy | dynatrace_api_token: {url:21}
honeycomb-key | hcaik_{ln:58}
honeycomb-legacy-key | HONEYCOMB_API_KEY={hex:32}
honeybadger-token | hbp_{an:36}
rollbar-token | ROLLBAR_ACCESS_TOKEN={hex:32}
bugsnag-key | BUGSNAG_API_KEY={hex:32}
pagerduty-user-token | u+{url:18}
pagerduty-key | PAGERDUTY_INTEGRATION_KEY={hex:32}
opsgenie-key | OPSGENIE_API_KEY={uuid}
axiom-token | xaat-{uuid}
logzio-token | LOGZIO_TOKEN={lo:32}
loggly-token | LOGGLY_TOKEN={uuid}
splunk-hec-token | SPLUNK_HEC_TOKEN={uuid}
sumologic-key | sumo_access_key: {an:64}
posthog-personal-key | phx_{an:45}
launchdarkly-key | LD_SDK_KEY=sdk-{uuid}
launchdarkly-token | LAUNCHDARKLY_ACCESS_TOKEN={url:40}
statsig-secret | secret-{an:43}
flagsmith-server-key | ser.{an:22}
mixpanel-secret | MIXPANEL_API_SECRET={hex:32}
segment-write-key | SEGMENT_WRITE_KEY={an:32}
fullstory-key | FULLSTORY_API_KEY=na1.{b64:100}
ubidots-token | BBFF-{an:30}
rootly-key | rootly_{hex:64}
databricks-token | dapi{hex:32}
openai-key | sk-proj-{url:58}T3BlbkFJ{url:58}
anthropic-key | sk-ant-api03-{url:93}AA
openrouter-key | sk-or-v1-{hex:64}
huggingface-token | hf_{lo:17}{UP:17}
groq-key | gsk_{an:52}
perplexity-key | pplx-{an:48}
replicate-token | r8_{an:37}
xai-key | xai-{an:80}
langsmith-key | lsv2_pt_{hex:32}_{hex:10}
langfuse-secret-key | LANGFUSE_SECRET_KEY=sk-lf-{uuid}
nvidia-key | nvapi-{url:64}
fireworks-key | FIREWORKS_API_KEY=fw_{an:24}
together-key | tgp_v1_{url:43}
elevenlabs-key | ELEVENLABS_API_KEY=sk_{hex:48}
voyage-key | VOYAGE_API_KEY=pa-{url:43}
cerebras-key | csk-{ln:48}
jina-key | jina_{hex:32}{url:28}
tavily-key | tvly-dev-{an:32}
firecrawl-key | fc-{hex:32}
browserbase-key | bb_live_{url:27}
e2b-key | e2b_{hex:40}
modal-token | MODAL_TOKEN_SECRET=as-{an:22}
bannerbear-key | bb_pr_{hex:30}
mem0-key | MEM0_API_KEY=m0-{an:40}
runway-key | RUNWAYML_API_SECRET=key_{hex:128}
cohere-key | COHERE_API_KEY={an:40}
mistral-key | MISTRAL_API_KEY={an:32}
deepseek-key | DEEPSEEK_API_KEY=sk-{hex:32}
azure-openai-key | AZURE_OPENAI_KEY={hex:32}
assemblyai-key | ASSEMBLYAI_API_KEY={hex:32}
deepgram-key | DEEPGRAM_API_KEY={hex:40}
wandb-key | WANDB_API_KEY={hex:40}
stability-key | STABILITY_API_KEY=sk-{an:48}
private-ai-key | PRIVATE_AI_API_KEY={ln:32}
pinecone-key | pcsk_{an:6}_{an:63}
planetscale-token | pscale_tkn_{url:43}
neon-key | NEON_API_KEY=napi_{ln:64}
clickhouse-cloud-key | 4b1d{an:38}
fauna-secret | FAUNA_SECRET=fnA{url:37}
xata-key | XATA_API_KEY=xau_{an:36}
mongodb-atlas-key | MONGODB_ATLAS_PRIVATE_KEY={uuid}
influxdb-token | INFLUX_TOKEN={url:86}==
algolia-key | ALGOLIA_ADMIN_KEY={hex:32}
elastic-cloud-key | ELASTIC_API_KEY={b64:60}==
upstash-token | UPSTASH_REDIS_REST_TOKEN=A{an:60}
snowflake-password | SNOWFLAKE_PASSWORD={an:16}
couchbase-password | couchbase_password = "{an:18}"
aiven-token | AIVEN_TOKEN={b64:372}
sendgrid-key | SG.{url:22}.{url:43}
brevo-key | xkeysib-{hex:64}-{an:16}
mailgun-key | key-{hex:32}
mailgun-signing-key | MAILGUN_API_KEY={hex:32}-{hex:8}-{hex:8}
mailchimp-key | {hex:32}-us14
mandrill-key | MANDRILL_KEY=md-{url:22}
postmark-token | POSTMARK_SERVER_TOKEN={uuid}
sparkpost-key | SPARKPOST_API_KEY={hex:40}
resend-key | re_{an:8}_{an:24}
mailersend-token | mlsn.{hex:64}
mailjet-key | MJ_APIKEY_PRIVATE={hex:32}
messagebird-key | MESSAGEBIRD_API_KEY={an:25}
twilio-key | SK{hex:32}
twilio-auth-token | TWILIO_AUTH_TOKEN={hex:32}
vonage-secret | VONAGE_API_SECRET={an:16}
plivo-token | PLIVO_AUTH_TOKEN={an:40}
telnyx-key | KEY{HEX:32}_{an:22}
courier-key | pk_prod_{up:28}
onesignal-key | os_v2_app_{ln:110}
pushover-token | PUSHOVER_TOKEN=a{ln:29}
zoho-token | 1000.{hex:32}.{hex:32}
loops-key | LOOPS_API_KEY={hex:32}
adafruit-key | aio_{an:28}
adobe-client-secret | p8e-{an:32}
airtable-token | pat{an:14}.{hex:64}
airtable-legacy-key | AIRTABLE_API_KEY=key{an:14}
asana-token | 2/{num:16}/{num:16}:{hex:32}
asana-secret | ASANA_CLIENT_SECRET={an:32}
authress-key | sc_{ln:10}.{ln:4}.acc_{ln:12}.{url:60}
beamer-key | BEAMER_API_KEY=b_{ln:44}
bitly-token | BITLY_ACCESS_TOKEN={hex:40}
box-token | BOX_CLIENT_SECRET={an:32}
calendly-token | CALENDLY_TOKEN=eyJ{url:30}.eyJ{url:60}.{url:43}
clickup-token | pk_{num:8}_{up:32}
close-key | api_{an:22}.{an:22}
confluent-key | CONFLUENT_CLOUD_API_SECRET={b64:64}
contentful-token | CFPAT-{url:43}
contentful-delivery-token | CONTENTFUL_DELIVERY_TOKEN={url:43}
dropbox-token | DROPBOX_TOKEN=sl.{url:140}
dropbox-app-secret | DROPBOX_APP_SECRET={ln:15}
etsy-key | ETSY_API_KEY={ln:24}
facebook-access-token | EAAB{an:140}
facebook-secret | FACEBOOK_APP_SECRET={hex:32}
fastly-token | FASTLY_API_TOKEN={url:32}
finnhub-key | FINNHUB_API_KEY={ln:20}
flexport-token | shltm_{url:40}
flickr-key | FLICKR_API_KEY={hex:32}
frameio-token | fio-u-{url:64}
freshbooks-token | FRESHBOOKS_ACCESS_TOKEN={hex:64}
freshdesk-key | FRESHDESK_API_KEY={an:20}
freemius-key | 'secret_key' => 'sk_{an:29}',
github-app-secret | GITHUB_CLIENT_SECRET={hex:40}
hubspot-token | pat-na1-{uuid}
hubspot-key | HUBSPOT_API_KEY={uuid}
instagram-token | IGQVJ{url:150}
jira-token | JIRA_API_TOKEN={an:24}
klaviyo-legacy-key | KLAVIYO_PRIVATE_KEY=pk_{hex:34}
linear-key | lin_api_{an:40}
linkedin-secret | LINKEDIN_CLIENT_SECRET={an:16}
looker-secret | LOOKERSDK_CLIENT_SECRET={an:24}
mapbox-secret-token | sk.eyJ{url:40}.{url:22}
maxmind-key | {an:6}_{an:29}_mmk
meraki-key | MERAKI_DASHBOARD_API_KEY={hex:40}
miro-token | MIRO_ACCESS_TOKEN={url:27}
monday-token | MONDAY_API_TOKEN=eyJ{url:30}.eyJ{url:60}.{url:43}
notion-token | ntn_{an:46}
nytimes-key | NYTIMES_API_KEY={an:32}
onepassword-connect-token | OP_CONNECT_TOKEN=eyJ{url:30}.eyJ{url:80}.{url:43}
pubnub-key | sec-c-{an:48}
rapidapi-key | X-RapidAPI-Key: {an:50}
riot-key | RGAPI-{uuid}
shopify-partner-token | prtapi_{hex:32}
squarespace-key | SQUARESPACE_API_KEY={uuid}
storyblok-token | STORYBLOK_TOKEN={an:22}tt
sumup-key | sup_sk_{an:32}
todoist-token | TODOIST_API_TOKEN={hex:40}
trello-key | TRELLO_API_KEY={an:32}
trello-token | ATTA{hex:64}{HEX:8}
twitch-token | TWITCH_CLIENT_SECRET={ln:30}
twitter-bearer-token | AAAAAAAAAAAAAAAAAAAAA{an:10}AAAAAAAA{an:30}%3D{an:50}
twitter-access-token | TWITTER_ACCESS_TOKEN={num:19}-{an:30}
twitter-secret | TWITTER_CONSUMER_SECRET={an:50}
typeform-token | tfp_{url:44}_{url:14}
voiceflow-key | VF.DM.{hex:24}.{an:16}
webflow-token | WEBFLOW_API_TOKEN={hex:64}
wordpress-app-password | WP_APPLICATION_PASSWORD="{an:4} {an:4} {an:4} {an:4} {an:4} {an:4}"
yousign-key | YOUSIGN_API_KEY={an:32}
zendesk-token | ZENDESK_API_TOKEN={an:40}
zoho-client-secret | ZOHO_CLIENT_SECRET={hex:42}
sanity-token | SANITY_AUTH_TOKEN=sk{an:180}
shopify-custom-token | SHOPIFY_ACCESS_TOKEN={hex:32}
spotify-secret | SPOTIFY_CLIENT_SECRET={hex:32}
steam-key | STEAM_API_KEY={HEX:32}
youtube-oauth-secret | YOUTUBE_CLIENT_SECRET={url:24}
zapier-key | ZAPIER_API_KEY={hex:32}
alibaba-secret-key | ALIBABA_CLOUD_ACCESS_KEY_SECRET={an:30}
vultr-api-key | VULTR_API_KEY={up:36}
atlassian-data-center-pat | JIRA_PAT={dcpat}
bitbucket-key | BITBUCKET_CLIENT_SECRET={an:32}
youtrack-token | YOUTRACK_TOKEN=perm:{b64:12}.{an:6}.{an:30}
deno-deploy-token | DENO_DEPLOY_TOKEN=ddp_{an:36}
portainer-token | X-API-Key: ptr_{b64:44}
ngrok-token | ngrok config add-authtoken 2{an:26}_{an:21}
nightfall-key | NF-{an:32}
stytch-secret | STYTCH_SECRET=secret-live-{url:36}
newrelic-mobile-token | AA{hex:40}-NRMA
uptimerobot-key | UPTIMEROBOT_API_KEY=u{num:7}-{hex:24}
signalwire-token | SIGNALWIRE_TOKEN=PT{hex:48}
imagekit-private-key | IMAGEKIT_PRIVATE_KEY=private_{b64:28}=
netlify-legacy-token | NETLIFY_AUTH_TOKEN={url:43}
uptimerobot-main-key | ur{num:7}-{hex:24}
`;
