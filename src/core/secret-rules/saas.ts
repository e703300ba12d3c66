/**
 * Secret rules for messaging, payments and other SaaS APIs.
 */
import type { Rule } from './checks.js';

export const SAAS_RULES: readonly Rule[] = [
  {
    id: 'slack-token',
    keywords: ['xox', 'xapp-'],
    re: /\bxox[abposre]-(?:\d+-)?[A-Za-z0-9-]{10,250}\b|\bxapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+\b/g,
    // Real tokens carry long numeric ids (team, user, bot): `xoxb-12345-abcd234` is only shaped like one.
    check: (v) => v.length >= 24 && /\d{8,}/.test(v),
  },
  { id: 'slack-webhook', keywords: ['hooks.slack.com'], re: /https?:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9_/+-]{20,}/g },
  { id: 'discord-webhook', keywords: ['discord'], re: /https:\/\/(?:\w+\.)?discord(?:app)?\.com\/api\/webhooks\/\d+\/[A-Za-z0-9_-]{60,}/g },
  { id: 'stripe-key', keywords: ['sk_', 'rk_'], re: /\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}\b/g },
  { id: 'stripe-webhook-secret', keywords: ['whsec_'], re: /\bwhsec_[A-Za-z0-9+/]{32,}\b/g },
  { id: 'square-token', keywords: ['sq0', 'eaaa'], re: /\bsq0(?:atp|csp)-[0-9A-Za-z_-]{22,43}\b|\bEAAA[A-Za-z0-9_-]{60}\b/g },
  { id: 'facebook-access-token', keywords: ['eaa'], re: /\bEAA[A-Za-z0-9]{90,}/g },
  { id: 'twilio-key', keywords: ['sk'], re: /\bSK[0-9a-f]{32}\b/g },
  { id: 'sendgrid-key', keywords: ['sg.'], re: /\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b/g },
  { id: 'brevo-key', keywords: ['xkeysib-', 'xsmtpsib-'], re: /\bx(?:keysib|smtpsib)-[a-f0-9]{64}-[A-Za-z0-9]{16}\b/g },
  { id: 'mailgun-key', keywords: ['key-'], re: /\bkey-[0-9a-f]{32}\b/g },
  { id: 'mailchimp-key', keywords: ['-us'], re: /\b[0-9a-f]{32}-us\d{1,2}\b/g },
  { id: 'easypost-key', keywords: ['ezak', 'eztk'], re: /\bEZ[AT]K[A-Za-z0-9]{54}\b/g },
  { id: 'shopify-token', keywords: ['shp'], re: /\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b/g },
  { id: 'shippo-token', keywords: ['shippo_'], re: /\bshippo_(?:live|test)_[a-f0-9]{40}\b/g },
  { id: 'duffel-token', keywords: ['duffel_'], re: /\bduffel_(?:test|live)_[A-Za-z0-9_=-]{43}\b/g },
  {
    id: 'plaid-token',
    keywords: ['access-sandbox', 'access-development', 'access-production'],
    re: /\baccess-(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g,
  },
  { id: 'telegram-bot-token', keywords: [':aa'], re: /\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b/g },
  { id: 'discord-bot-token', keywords: ['.'], re: /\b[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}\b/g },
  { id: 'linear-key', keywords: ['lin_'], re: /\blin_(?:api|oauth)_[A-Za-z0-9]{40}\b/g },
  { id: 'notion-token', keywords: ['secret_', 'ntn_'], re: /\b(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{40,})\b/g },
  { id: 'airtable-token', keywords: ['pat'], re: /\bpat[A-Za-z0-9]{14}\.[a-f0-9]{64}\b/g },
  { id: 'typeform-token', keywords: ['tfp_'], re: /\btfp_[A-Za-z0-9_.=-]{59}\b/g },
  { id: 'contentful-token', keywords: ['cfpat-'], re: /\bCFPAT-[A-Za-z0-9_-]{43}\b/g },
  { id: 'frameio-token', keywords: ['fio-u-'], re: /\bfio-u-[A-Za-z0-9_=-]{64}\b/g },
  { id: 'adobe-client-secret', keywords: ['p8e-'], re: /\bp8e-[A-Za-z0-9]{32}\b/g },
  {
    id: 'sumologic-key',
    keywords: ['sumo'],
    re: /sumo[\w.-]{0,20}?(?:key|secret|access|id)["']?\s*(?:[:=]|:=)\s*["']?(su[A-Za-z0-9]{12}|[A-Za-z0-9]{64})(?![A-Za-z0-9])/gi,
    group: 1,
  },
];
