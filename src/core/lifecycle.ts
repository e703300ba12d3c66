/**
 * The lifecycle math, pure: strength and effective confidence of an entry as of `now`, from its committed parameters,
 * its local usage and the project's decay configuration. Nothing is written on a tick: decay commits only a forgetting.
 */
import type { FSRS } from 'ts-fsrs';
import { lazy } from '../lazy.js';
import { memo } from '../try.js';
import { confidenceLabel } from './query.js';
import type { EntryLike } from './meta.js';
import type { Lifecycle } from './schema.js';

export const CURVES = ['exponential', 'half-life', 'periodic', 'fsrs6'] as const;
export type Curve = (typeof CURVES)[number];
export type MemoryType = 'semantic' | 'episodic' | 'procedural';

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** The settings of a project's decay: the defaults' shape, a forget threshold, and overrides by section and memory type. */
export interface DecayConfig extends Defaults {
  /** Below this (strictly) an entry is forgotten; default per curve (FORGET_DEFAULTS). */
  forget_threshold?: number;
  sections?: Partial<Record<string, DecayOverrides>>;
  memory_types?: Partial<Record<MemoryType, DecayOverrides>>;
}
type Defaults = typeof DEFAULT_DECAY;
type CurveKey = 'exponential' | 'half_life' | 'periodic' | 'fsrs6';

/** Settings of a decay block (a project's, a section's, a memory type's; config-schema.ts allows only a curve, its threshold and parameters below). */
type DecayOverrides = Partial<Omit<DecayConfig, CurveKey>> & { [K in CurveKey]?: Partial<DecayConfig[K]> };

// ts-fsrs loads only when the fsrs6 curve is used: every CLI command imports this module.
const tsFsrs = lazy<typeof import('ts-fsrs')>('ts-fsrs');
let engine: FSRS | undefined;
const fsrs = (): FSRS => (engine ??= new (tsFsrs().FSRS)(tsFsrs().generatorParameters()));

export const DEFAULT_DECAY = {
  // The gentlest curve: confidence fades 1-5 % a month, never below 0.10; nothing is forgotten unless a project chooses so.
  curve: 'periodic' as Curve,
  forget_action: 'archive' as 'archive' | 'delete',
  /** How often the daemon runs decay, e.g. `1h`, `24h`. */
  interval: '24h',
  batch_size: 1000,
  /** Long-term entries whose importance is below this are archived once unused this long. */
  archive_below_importance: 0.15,
  retention_days: 180,
  exponential: { stability_hours: 24 },
  half_life: { function: 'exponential' as 'exponential' | 'linear' | 'step', half_life_days: 30, min_importance: 0.1, access_weight: 0.3 },
  periodic: { base_rate: 0.95, max_rate: 0.99, period_days: 30, floor: 0.1 },
  // FSRS-6's initial stability after a first "Good" review (w[2]), in days; a test keeps it equal to ts-fsrs's.
  fsrs6: { stability_days: 2.3065 },
};

/**
 * Forgetting thresholds that mean the same for each curve ("rarely if ever useful now"): e^(-t/S) < 0.1 after 2.3 S; the
 * half-life blend is floored at 0.1, so just above it; periodic never goes below its 0.10 floor (it fades, it does not
 * forget); FSRS-6's long tail reaches R = 0.5 only near 90 S, so 0.1 would never fire there.
 */
export const FORGET_DEFAULTS: Record<Curve, number> = { exponential: 0.1, 'half-life': 0.15, periodic: 0.1, fsrs6: 0.5 };

/** Reinforcement on retrieval by memory type: confidence boost and cap. */
export const RETRIEVAL_BOOST: Record<MemoryType, { boost: number; cap: number }> = {
  semantic: { boost: 0.05, cap: 0.99 },
  procedural: { boost: 0.04, cap: 0.97 },
  episodic: { boost: 0.03, cap: 0.95 },
};

/** Local usage of one entry (never committed). */
export interface Usage {
  retrievals: number;
  last_accessed_at: string | null;
}

/** Memory type: committed, else by section (decisions are facts, learnings procedures, the rest events). */
export const memoryTypeOf = (e: Pick<EntryLike, 'section' | 'lifecycle'>): MemoryType =>
  e.lifecycle?.memory_type ?? (e.section === 'decisions' ? 'semantic' : e.section === 'learnings' ? 'procedural' : 'episodic');

const TECH_TERMS =
  /\b(?:api|database|schema|migration|deploy|config|error|incident|latency|security|auth|token|cache|index|queue|retry|timeout|rollback|invariant|contract|version|release)\b/gi;

/** A note its writer marked as important: "Important: …", "Critical: …", "IMPORTANT". */
export const markedImportant = (text: string): boolean => /^\s*(?:important|critical|note to self)\s*[:!-]/i.test(text) || /\bIMPORTANT\b/.test(text);

const KIND_WEIGHT: Record<string, number> = {
  decision: 0.2,
  invariant: 0.2,
  requirement: 0.15,
  incident: 0.15,
  runbook_step: 0.1,
  metric: 0.05,
  hypothesis: 0,
  other: 0.05,
};

/** Past these counts importance stops growing (0.3 at 120 words, 0.2 at 5 terms), so counting stops there. */
const WORDS_CAP = 120;
const TECH_CAP = 5;
const WORD = /\S+/g;

function countWords(text: string, cap: number): number {
  WORD.lastIndex = 0;
  let n = 0;
  while (n < cap && WORD.exec(text)) n++;
  return n;
}

/** Initial importance from content analysis (0.2..0.9): longer, more technical and weightier kinds score higher. */
export function initialImportance(e: { summary: string; content: string; kind: string }): number {
  if (markedImportant(e.summary) || markedImportant(e.content)) return 0.9;
  const words = Math.min(WORDS_CAP, countWords(e.summary, WORDS_CAP) + countWords(e.content, WORDS_CAP));
  const tech = new Set<string>();
  for (const text of [e.summary, e.content]) {
    TECH_TERMS.lastIndex = 0;
    for (let m = TECH_TERMS.exec(text); m && tech.size < TECH_CAP; m = TECH_TERMS.exec(text)) tech.add(m[0].toLowerCase());
  }
  const v = 0.2 + Math.min(0.3, words / 400) + Math.min(0.2, tech.size * 0.04) + (KIND_WEIGHT[e.kind] ?? 0);
  return Math.round(Math.min(0.9, v) * 100) / 100;
}

/** Parses `30m`, `1h`, `24h`, `7d`, `2w` into milliseconds; null if invalid. */
export function intervalMs(s: string): number | null {
  const m = /^(\d+(?:\.\d+)?)\s*(m|h|d|w)$/.exec(s.trim());
  return m ? Number(m[1]) * { m: 60_000, h: HOUR_MS, d: DAY_MS, w: 7 * DAY_MS }[m[2] as 'm' | 'h' | 'd' | 'w'] : null;
}

const configMemo = new WeakMap<DecayConfig, Map<string, DecayConfig>>();

/** The configuration that applies to one entry: project defaults, then section, then memory type (memoized). */
export function configFor(cfg: DecayConfig, section: string, type: MemoryType): DecayConfig {
  let m = configMemo.get(cfg);
  if (!m) configMemo.set(cfg, (m = new Map<string, DecayConfig>()));
  const key = `${section}\u0000${type}`;
  let hit = m.get(key);
  if (!hit) m.set(key, (hit = overlay(overlay(cfg, cfg.sections?.[section]), cfg.memory_types?.[type])));
  return hit;
}

/** `o` over `base`: the settings it gives, and each curve's parameters merged one by one. */
export function overlay(base: DecayConfig, o: DecayOverrides | undefined): DecayConfig {
  if (!o) return base;
  return {
    ...base,
    ...Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)),
    exponential: { ...base.exponential, ...o.exponential },
    half_life: { ...base.half_life, ...o.half_life },
    periodic: { ...base.periodic, ...o.periodic },
    fsrs6: { ...base.fsrs6, ...o.fsrs6 },
  };
}

// ---------------------------------------------------------------- the curves

export const exponentialStrength = (hours: number, stabilityHours: number): number => Math.exp(-hours / stabilityHours);

/** The decay factor of the half-life curve (before the importance floor). */
export function halfLifeFactor(days: number, accessCount: number, importance: number, p: DecayConfig['half_life']): number {
  const accessFactor = 1.5 ** Math.min(accessCount, 20);
  const h = p.half_life_days * accessFactor * (1 + importance);
  let time: number;
  if (p.function === 'linear') time = Math.max(0, 1 - days / (2 * h));
  else if (p.function === 'step') time = days < h ? 1 : days < 2 * h ? 0.5 : 0.25;
  else time = 2 ** (-days / h);
  const accessStability = Math.min(1, Math.log1p(accessCount) / Math.log(100));
  return (1 - p.access_weight) * time + p.access_weight * accessStability;
}

/** Confidence · rate^⌊days/period⌋, rate = base + (max-base)·min(1, retrievals/10), floored. */
export function periodicConfidence(
  confidence: number,
  days: number,
  retrievals: number,
  p: DecayConfig['periodic'],
): { value: number; rate: number; periods: number } {
  const rate = p.base_rate + (p.max_rate - p.base_rate) * Math.min(1, retrievals / 10);
  const periods = Math.floor(days / p.period_days);
  return { value: Math.max(p.floor, confidence * rate ** periods), rate, periods };
}

/** FSRS-6 retrievability after `days` with stability `stabilityDays` (ts-fsrs). */
export const fsrsRetrievability = (days: number, stabilityDays: number): number => fsrs().forgetting_curve(Math.max(0, days), stabilityDays);

const round = (x: number, d = 4): number => Math.round(x * 10 ** d) / 10 ** d;
const NO_LIFECYCLE: Lifecycle = Object.freeze({});

/** Date.parse, memoized: the same few thousand timestamps are parsed on every query. */
const timeMs = memo(Date.parse, 200_000);

/**
 * An entry's lifecycle as of `now` (ms): strength (0..1, 1 right after writing, reading or reinforcing), effective confidence
 * (after boosts and decay), the curve's `factor`, and `value` (compared with the threshold: strength, or effective confidence
 * for periodic). `baseImportance`: the initial one from content analysis.
 */
export function lifecycleOf(e: EntryLike, usage: Usage | undefined, project: DecayConfig, now: number, baseImportance = 0.5) {
  const type = memoryTypeOf(e);
  const cfg = configFor(project, e.section, type);
  const lc: Lifecycle = e.lifecycle ?? NO_LIFECYCLE;
  const retrievals = usage?.retrievals ?? 0;
  let last = timeMs(e.updated_at);
  if (lc.reviewed_at) last = Math.max(last, timeMs(lc.reviewed_at));
  if (usage?.last_accessed_at) last = Math.max(last, timeMs(usage.last_accessed_at));
  let elapsed = Math.max(0, now - last);
  const daysSince = elapsed / DAY_MS;
  if (lc.decay_policy === 'aggressive') elapsed *= 2;
  // Importance now: committed (or initial) plus 0.02 per retrieval, at most 1.
  const importance = Math.min(1, Math.round(((lc.importance ?? baseImportance) + 0.02 * retrievals) * 1000) / 1000);
  // Retrieval boosts confidence by type, up to a cap; it never lowers it.
  const { boost, cap } = RETRIEVAL_BOOST[type];
  const boosted = Math.max(e.confidence, Math.min(cap, e.confidence + boost * retrievals));
  const threshold = cfg.forget_threshold ?? FORGET_DEFAULTS[cfg.curve];
  const exempt = lc.protected ? 'protected' : lc.decay_policy === 'none' ? 'decay_policy none' : type === 'semantic' ? 'semantic' : null;
  const state = (strength: number, effective: number, factor: number, value: number, forget: boolean) => ({
    curve: cfg.curve,
    memory_type: type,
    strength: round(strength),
    effective_confidence: round(effective),
    // A label never claims more than the entry states: reinforcement raises the effective value,
    // not how the knowledge was stated.
    confidence_label: confidenceLabel(Math.min(effective, e.confidence)),
    importance,
    days_since_access: Math.round(daysSince * 100) / 100,
    retrievals,
    last_accessed_at: usage?.last_accessed_at ?? null,
    factor: round(factor),
    exempt,
    threshold,
    value: round(value),
    forget,
  });
  if (exempt) return state(1, boosted, 1, cfg.curve === 'periodic' ? boosted : 1, false);
  const days = elapsed / DAY_MS;
  // Below the curve's threshold, or unimportant and unused for the retention period.
  const forget = (value: number): boolean => round(value) < threshold || (importance < cfg.archive_below_importance && daysSince > cfg.retention_days);
  if (cfg.curve === 'periodic') {
    // This curve decays the confidence itself; the strength is the share of it left.
    const p = periodicConfidence(boosted, days, retrievals, cfg.periodic);
    return state(boosted > 0 ? p.value / boosted : 0, p.value, p.rate ** p.periods, p.value, forget(p.value));
  }
  const growth = 1 + 0.5 * Math.min(retrievals, 20); // retrieval makes a memory more stable, at most ×11
  const factor =
    cfg.curve === 'exponential'
      ? exponentialStrength(elapsed / HOUR_MS, (lc.stability ?? cfg.exponential.stability_hours) * growth)
      : cfg.curve === 'half-life'
        ? halfLifeFactor(days, retrievals, importance, cfg.half_life)
        : fsrsRetrievability(days, (lc.stability !== undefined ? lc.stability / 24 : cfg.fsrs6.stability_days) * growth);
  // The half-life curve's strength is floored at its minimum importance.
  const strength = cfg.curve === 'half-life' ? Math.max(cfg.half_life.min_importance, factor) : factor;
  return state(strength, boosted * strength, factor, strength, forget(strength));
}

// ---------------------------------------------------------------- reinforcement (committed)

export type BoostType = 'additive' | 'multiplicative' | 'set_value';

/** Importance after an explicit boost, capped at `max`. */
export function boostImportance(current: number, type: BoostType, amount: number, max = 1): number {
  const next = type === 'additive' ? current + amount : type === 'multiplicative' ? current * (1 + amount) : amount;
  return round(Math.max(0, Math.min(max, next)), 3);
}

/** `memory reinforce`: strength back to 1, stability up (doubled, or FSRS-6's update for a "Good" review). */
export function reinforceLifecycle(
  e: EntryLike,
  project: DecayConfig,
  now: number,
  opts: { boostType?: BoostType; amount?: number; baseImportance?: number } = {},
): Lifecycle {
  const cfg = configFor(project, e.section, memoryTypeOf(e));
  const lc: Lifecycle = { ...(e.lifecycle ?? {}) };
  const last = Math.max(Date.parse(e.updated_at), lc.reviewed_at ? Date.parse(lc.reviewed_at) : 0);
  const days = Math.max(0, (now - last) / DAY_MS);
  if (cfg.curve === 'fsrs6') {
    const s = lc.stability !== undefined ? lc.stability / 24 : cfg.fsrs6.stability_days;
    const good = tsFsrs().Rating.Good;
    const d = lc.difficulty ?? fsrs().init_difficulty(good);
    const next = fsrs().next_state({ stability: s, difficulty: d }, days, good);
    lc.stability = round(next.stability * 24, 3);
    lc.difficulty = round(next.difficulty, 3);
  } else {
    const current = lc.stability ?? (cfg.curve === 'exponential' ? cfg.exponential.stability_hours : cfg.half_life.half_life_days * 24);
    lc.stability = round(current * 2, 3);
  }
  if (opts.boostType) lc.importance = boostImportance(lc.importance ?? opts.baseImportance ?? 0.5, opts.boostType, opts.amount ?? 0.1);
  lc.reviewed_at = new Date(now).toISOString();
  return lc;
}

/** Episodic memories retrieved at least 5 times with confidence above 0.6. */
export const isPromotionCandidate = (e: EntryLike, usage: Usage | undefined): boolean =>
  memoryTypeOf(e) === 'episodic' && (usage?.retrievals ?? 0) >= 5 && e.confidence > 0.6 && e.status === 'active';
