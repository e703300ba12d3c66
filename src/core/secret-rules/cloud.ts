/**
 * Secret rules for cloud providers and infrastructure platforms (token formats as their vendors document them).
 */
import { entropy, type Rule } from './checks.js';

export const CLOUD_RULES: readonly Rule[] = [
  { id: 'aws-access-key-id', keywords: ['akia', 'asia', 'abia', 'acca', 'a3t'], re: /\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z2-7]{16}\b/g },
  {
    id: 'aws-secret-access-key',
    keywords: ['aws'],
    re: /aws.{0,24}?(?:secret|private).{0,16}?[:=]\s*["']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])/gi,
    group: 1,
  },
  { id: 'gcp-api-key', keywords: ['aiza'], re: /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g },
  { id: 'google-oauth-client-secret', keywords: ['gocspx'], re: /\bGOCSPX-[A-Za-z0-9_-]{28}\b/g },
  { id: 'google-oauth-access-token', keywords: ['ya29.'], re: /\bya29\.[0-9A-Za-z_-]{30,}/g },
  { id: 'azure-storage-key', keywords: ['accountkey'], re: /AccountKey=([A-Za-z0-9+/]{86}==)/g, group: 1 },
  { id: 'azure-client-secret', keywords: ['q~'], re: /(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])/g },
  { id: 'azure-sas-signature', keywords: ['sig='], re: /[?&]sig=([A-Za-z0-9%+/]{30,}={0,2})/g, group: 1 },
  { id: 'alibaba-access-key-id', keywords: ['ltai'], re: /\bLTAI[A-Za-z0-9]{20}\b/g },
  { id: 'digitalocean-token', keywords: ['do'], re: /\bdo[opr]_v1_[a-f0-9]{64}\b/g },
  { id: 'openshift-token', keywords: ['sha256~'], re: /\bsha256~[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/g },
  {
    id: 'flyio-token',
    keywords: ['flyv1', 'fo1_', 'fm1', 'fm2_'],
    re: /\bFlyV1 fm[12][ar]?_[A-Za-z0-9+/=_,-]{40,}|\bfo1_[A-Za-z0-9_-]{43}\b|\bfm[12][ar]?_[A-Za-z0-9+/]{100,}={0,3}/g,
  },
  { id: 'heroku-key', keywords: ['hrku-'], re: /\bHRKU-[A-Za-z0-9_-]{40,}\b/g },
  {
    id: 'cloudflare-token',
    keywords: ['cloudflare', 'cf_api'],
    re: /(?:cloudflare|cf_api).{0,24}?[:=]\s*["']?([A-Za-z0-9_-]{40})(?![A-Za-z0-9_-])/gi,
    group: 1,
  },
  { id: 'cloudflare-origin-ca-key', keywords: ['v1.0-'], re: /\bv1\.0-[a-f0-9]{24}-[a-f0-9]{146}\b/g },
  { id: 'terraform-cloud-token', keywords: ['atlasv1'], re: /\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}\b/g },
  { id: 'vault-token', keywords: ['hvs.', 'hvb.'], re: /\bhv[sb]\.[A-Za-z0-9_-]{24,}\b/g },
  {
    // Vault's older service tokens: `s.` and 24 random characters (not a property chain: mixed case and digits).
    id: 'vault-legacy-token',
    keywords: ['s.'],
    re: /(?<![\w.])s\.[A-Za-z0-9]{24}(?![\w(])/g,
    check: (v) => /[a-z]/.test(v) && /[A-Z]/.test(v) && /\d/.test(v.slice(2)) && entropy(v.slice(2)) >= 3.8,
  },
  { id: 'doppler-token', keywords: ['dp.'], re: /\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}\b/g },
  { id: 'pulumi-token', keywords: ['pul-'], re: /\bpul-[a-f0-9]{40}\b/g },
  { id: 'dynatrace-token', keywords: ['dt0c01.'], re: /\bdt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}\b/g },
  { id: 'artifactory-token', keywords: ['akcp', 'cmvmdgtu'], re: /\bAKCp[A-Za-z0-9]{69}\b|\bcmVmdGtu[A-Za-z0-9]{56}\b/g },
  { id: 'harness-token', keywords: ['pat.', 'sat.'], re: /\b(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[a-f0-9]{24}\.[A-Za-z0-9]{20}\b/g },
  {
    id: 'yandex-token',
    keywords: ['aqvn', 'yc', 't1.'],
    re: /\bAQVN[A-Za-z0-9_-]{35,38}\b|\bYC[A-Za-z0-9_-]{38}\b|\bt1\.[A-Z0-9a-z_-]+={0,2}\.[A-Z0-9a-z_-]{86}={0,2}/g,
  },
];
