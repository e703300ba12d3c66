/**
 * Secret rules for code hosting, CI and package registries.
 */
import type { Rule } from './checks.js';

export const CODE_HOSTING_RULES: readonly Rule[] = [
  { id: 'github-token', keywords: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'], re: /\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}\b/g },
  { id: 'github-fine-grained-token', keywords: ['github_pat_'], re: /\bgithub_pat_[A-Za-z0-9_]{60,}\b/g },
  {
    id: 'gitlab-token',
    keywords: ['gl', 'gr1348941'],
    re: /\bgl(?:pat|dt|rt|ptt|ft|soat|cbt|imt|agent|oas|ffct|wt)-[A-Za-z0-9_-]{20,}\b|\bGR1348941[A-Za-z0-9_-]{20,}\b/g,
  },
  { id: 'sourcegraph-token', keywords: ['sgp_', 'sgs_'], re: /\bsg[ps]_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}\b/g },
  { id: 'npm-token', keywords: ['npm_'], re: /\bnpm_[A-Za-z0-9]{36}\b/g },
  { id: 'pypi-token', keywords: ['pypi-'], re: /\bpypi-AgE[A-Za-z0-9_-]{50,}/g },
  { id: 'rubygems-key', keywords: ['rubygems_'], re: /\brubygems_[a-f0-9]{48}\b/g },
  { id: 'nuget-api-key', keywords: ['oy2'], re: /\boy2[a-z0-9]{43}\b/g },
  { id: 'nuget-config-password', keywords: ['cleartextpassword'], re: /key=["']ClearTextPassword["']\s+value=["']([^"']{4,})["']/gi, group: 1 },
  { id: 'clojars-token', keywords: ['clojars_'], re: /\bCLOJARS_[a-z0-9]{60}\b/gi },
  {
    id: 'sidekiq-credentials',
    keywords: ['contribsys'],
    re: /BUNDLE_(?:ENTERPRISE|GEMS)__CONTRIBSYS__COM\s*[:=]\s*["']?([a-f0-9]{8}:[a-f0-9]{8})\b/gi,
    group: 1,
  },
  { id: 'sonarqube-token', keywords: ['sqp_', 'squ_', 'sqa_'], re: /\bsq[pua]_[a-f0-9]{40}\b/g },
  {
    id: 'sonar-token',
    keywords: ['sonar'],
    re: /sonar[\w.-]{0,20}?(?:token|login|key|password)["']?\s*(?:[:=]|:=)\s*["']?([A-Za-z0-9_=-]{40})(?![A-Za-z0-9_=-])/gi,
    group: 1,
  },
  {
    id: 'snyk-token',
    keywords: ['snyk'],
    re: /snyk[\w.-]{0,20}?(?:token|key|auth)["']?\s*(?:[:=]|:=)\s*["']?([a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12})\b/gi,
    group: 1,
  },
  { id: 'postman-key', keywords: ['pmak-'], re: /\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b/g },
  { id: 'atlassian-token', keywords: ['atatt3'], re: /\bATATT3[A-Za-z0-9_\-=]{150,}/g },
  { id: 'octopus-deploy-key', keywords: ['api-'], re: /\bAPI-[A-Z0-9]{26}\b/g, check: (v) => /\d/.test(v.slice(4)) },
  { id: 'prefect-token', keywords: ['pnu_'], re: /\bpnu_[A-Za-z0-9]{36}\b/g },
  { id: 'scalingo-token', keywords: ['tk-us-'], re: /\btk-us-[A-Za-z0-9_-]{48}\b/g },
  { id: 'intra42-secret', keywords: ['s-s4t2'], re: /\bs-s4t2(?:ud|af)-[a-f0-9]{64}\b/g },
  { id: 'infracost-key', keywords: ['ico-'], re: /\bico-[A-Za-z0-9]{32}\b/g },
  { id: 'readme-key', keywords: ['rdme_'], re: /\brdme_[a-z0-9]{70}\b/g },
  { id: 'netlify-token', keywords: ['nfp_'], re: /\bnfp_[A-Za-z0-9]{36}\b/g },
  { id: 'render-key', keywords: ['rnd_'], re: /\brnd_[A-Za-z0-9]{32}\b/g },
];
