/**
 * Secret rules for observability, data platforms and AI APIs.
 */
import type { Rule } from './checks.js';

export const OBSERVABILITY_AI_RULES: readonly Rule[] = [
  { id: 'grafana-token', keywords: ['glsa_', 'glc_'], re: /\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b|\bglc_[A-Za-z0-9+/]{32,}={0,2}/g },
  { id: 'newrelic-key', keywords: ['nrak-', 'nrjs-', 'nrii-'], re: /\bNRAK-[A-Z0-9]{27}\b|\bNRJS-[a-f0-9]{19}\b|\bNRII-[A-Za-z0-9_-]{32}\b/g },
  { id: 'sentry-token', keywords: ['sntry'], re: /\bsntry[su]_[A-Za-z0-9+/=_-]{40,}/g },
  { id: 'databricks-token', keywords: ['dapi'], re: /\bdapi[a-f0-9]{32}(?:-\d)?\b/g },
  { id: 'planetscale-token', keywords: ['pscale_'], re: /\bpscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{32,}\b/g },
  { id: 'supabase-token', keywords: ['sbp_'], re: /\bsbp_[a-f0-9]{40}\b/g },
  { id: 'pinecone-key', keywords: ['pcsk_'], re: /\bpcsk_[A-Za-z0-9_]{50,}\b/g },
  { id: 'mapbox-secret-token', keywords: ['sk.eyj'], re: /\bsk\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}/g },
  {
    id: 'openai-key',
    keywords: ['sk-'],
    re: /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}\b|\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}\b|\bsk-[A-Za-z0-9]{48}\b/g,
  },
  { id: 'anthropic-key', keywords: ['sk-ant-'], re: /\bsk-ant-(?:api|admin|sid)\d{2}-[A-Za-z0-9_-]{32,}\b/g },
  { id: 'huggingface-token', keywords: ['hf_', 'api_org_'], re: /\b(?:hf_|api_org_)[A-Za-z]{34}\b/g },
  { id: 'groq-key', keywords: ['gsk_'], re: /\bgsk_[A-Za-z0-9]{52}\b/g },
  { id: 'perplexity-key', keywords: ['pplx-'], re: /\bpplx-[A-Za-z0-9]{48}\b/g },
  { id: 'replicate-token', keywords: ['r8_'], re: /\br8_[A-Za-z0-9]{37}\b/g },
  { id: 'xai-key', keywords: ['xai-'], re: /\bxai-[A-Za-z0-9]{80}\b/g },
  { id: 'langsmith-key', keywords: ['lsv2_'], re: /\blsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}\b/g },
];
