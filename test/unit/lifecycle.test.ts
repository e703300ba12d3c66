/**
 * The lifecycle math with each seed scenario's numbers (000, 001, 003, 004).
 */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_DECAY,
  boostImportance,
  configFor,
  exponentialStrength,
  fsrsRetrievability,
  halfLifeFactor,
  initialImportance,
  isPromotionCandidate,
  lifecycleOf,
  periodicConfidence,
  reinforceLifecycle,
  overlay,
  type DecayConfig,
} from '../../src/core/lifecycle.js';
import type { EntryLike } from '../../src/core/meta.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const H = 3_600_000;
const D = 24 * H;
const e = (over: Partial<EntryLike> = {}): EntryLike => ({
  id: 'E1',
  section: 'observations',
  kind: 'other',
  subject: 's',
  scope: 'repo',
  tags: [],
  confidence: 1,
  evidence: [{ type: 'code' }],
  status: 'active',
  superseded_by: null,
  related_entries: [],
  valid_from: null,
  valid_to: null,
  created_by: 'a',
  created_at: new Date(T0).toISOString(),
  updated_at: new Date(T0).toISOString(),
  ...over,
});
const cfg = (over: Partial<DecayConfig> = {}): DecayConfig => ({ ...DEFAULT_DECAY, ...over });

describe('000: exponential strength', () => {
  it('1.0 with stability 24 h read after 24 h is about 0.368 (1/e)', () => {
    expect(exponentialStrength(24, 24)).toBeCloseTo(0.3679, 4);
    const lc = lifecycleOf(e(), undefined, cfg({ curve: 'exponential' }), T0 + 24 * H);
    expect(lc.strength).toBeCloseTo(0.3679, 4);
  });
  it('higher stability decays slower; below 0.1 is forgotten, above is kept', () => {
    expect(exponentialStrength(24, 240)).toBeGreaterThan(exponentialStrength(24, 24));
    const c = cfg({ curve: 'exponential' });
    expect(lifecycleOf(e(), undefined, c, T0 + 2 * D).forget).toBe(false); // e^-2 = 0.135
    expect(lifecycleOf(e(), undefined, c, T0 + 3 * D).forget).toBe(true); // e^-3 = 0.050
    expect(lifecycleOf(e({ lifecycle: { stability: 240 } }), undefined, c, T0 + 3 * D).forget).toBe(false);
  });
  it('a retrieval resets strength to 1 and makes it more stable', () => {
    const c = cfg({ curve: 'exponential' });
    const u = { retrievals: 1, last_accessed_at: new Date(T0 + 2 * D).toISOString() };
    expect(lifecycleOf(e(), u, c, T0 + 2 * D).strength).toBe(1);
    expect(lifecycleOf(e(), u, c, T0 + 3 * D).strength).toBeCloseTo(Math.exp(-24 / 36), 4); // stability ×1.5
  });
});

describe('001: half-life curve', () => {
  const p = { ...DEFAULT_DECAY.half_life, access_weight: 0, min_importance: 0 };
  it('exponential halves at the effective half-life (30 d × (1 + importance))', () => {
    expect(halfLifeFactor(30, 0, 0, p)).toBeCloseTo(0.5, 10);
    expect(halfLifeFactor(60, 0, 0.5 /* H = 45 */, p)).toBeCloseTo(2 ** (-60 / 45), 10);
  });
  it('linear reaches zero at twice the half-life; step transitions at 1× and 2×', () => {
    expect(halfLifeFactor(60, 0, 0, { ...p, function: 'linear' })).toBe(0);
    expect(halfLifeFactor(30, 0, 0, { ...p, function: 'linear' })).toBeCloseTo(0.5, 10);
    const step = { ...p, function: 'step' as const };
    expect([halfLifeFactor(29, 0, 0, step), halfLifeFactor(30, 0, 0, step), halfLifeFactor(59, 0, 0, step), halfLifeFactor(60, 0, 0, step)]).toEqual([
      1, 0.5, 0.5, 0.25,
    ]);
  });
  it('accesses slow decay (capped at 20), higher importance slows decay, the floor holds', () => {
    expect(halfLifeFactor(60, 3, 0, p)).toBeGreaterThan(halfLifeFactor(60, 0, 0, p));
    expect(halfLifeFactor(600, 25, 0, p)).toBe(halfLifeFactor(600, 20, 0, p));
    expect(halfLifeFactor(60, 0, 0.9, p)).toBeGreaterThan(halfLifeFactor(60, 0, 0.1, p));
    const c = cfg({ curve: 'half-life' });
    expect(lifecycleOf(e(), undefined, c, T0 + 3650 * D, 0.5).strength).toBe(0.1);
  });
  it('access_weight blends in access stability ln(1+n)/ln(100)', () => {
    const w = { ...p, access_weight: 0.3 };
    expect(halfLifeFactor(0, 99, 0, w)).toBeCloseTo(1, 10);
    expect(halfLifeFactor(1e6, 0, 0, w)).toBeCloseTo(0, 5);
  });
  it('boost types: additive, multiplicative, set_value, capped', () => {
    expect(boostImportance(0.5, 'additive', 0.1)).toBe(0.6);
    expect(boostImportance(0.5, 'multiplicative', 0.5)).toBe(0.75);
    expect(boostImportance(0.5, 'set_value', 0.2)).toBe(0.2);
    expect(boostImportance(0.95, 'additive', 0.5)).toBe(1);
  });
});

describe('003: periodic confidence decay', () => {
  const p = DEFAULT_DECAY.periodic;
  it('1.0 after 60 days with 0 retrievals is 0.9025', () => {
    expect(periodicConfidence(1, 60, 0, p).value).toBeCloseTo(0.9025, 10);
    expect(lifecycleOf(e(), undefined, cfg(), T0 + 60 * D).effective_confidence).toBe(0.9025);
  });
  it('the worked example: 2 retrievals 0.958 → 0.879, 10 retrievals 0.99 → 0.970 after 3 periods', () => {
    expect(periodicConfidence(1, 30, 2, p).value).toBeCloseTo(0.958, 10);
    expect(periodicConfidence(1, 90, 2, p).value).toBeCloseTo(0.879, 3);
    expect(periodicConfidence(1, 90, 10, p).value).toBeCloseTo(0.97, 3);
  });
  it('floor 0.10; semantic, protected and decay_policy none never decay', () => {
    expect(periodicConfidence(1, 30 * 200, 0, p).value).toBe(0.1);
    const later = T0 + 365 * D;
    expect(lifecycleOf(e({ section: 'decisions' }), undefined, cfg(), later).effective_confidence).toBe(1);
    expect(lifecycleOf(e({ lifecycle: { protected: true } }), undefined, cfg(), later).exempt).toBe('protected');
    expect(lifecycleOf(e({ lifecycle: { decay_policy: 'none' } }), undefined, cfg(), later).strength).toBe(1);
    expect(lifecycleOf(e({ lifecycle: { decay_policy: 'aggressive' } }), undefined, cfg(), T0 + 30 * D).effective_confidence).toBeCloseTo(0.9025, 4);
  });
  it('retrieval boosts confidence by type up to the cap; hedging labels follow effective confidence', () => {
    const u = { retrievals: 2, last_accessed_at: new Date(T0).toISOString() };
    expect(lifecycleOf(e({ confidence: 0.8 }), u, cfg(), T0).effective_confidence).toBeCloseTo(0.86, 10); // episodic +0.03 ×2
    expect(lifecycleOf(e({ confidence: 0.9, section: 'learnings' }), { ...u, retrievals: 5 }, cfg(), T0).effective_confidence).toBe(0.97); // procedural cap
    const labels = [0.95, 0.75, 0.55, 0.3].map((c) => lifecycleOf(e({ confidence: c }), undefined, cfg(), T0).confidence_label);
    expect(labels).toEqual(['stated explicitly', 'high confidence', 'inferred', 'uncertain']);
  });
  it('promotion candidates: episodic, retrieved 5+ times, confidence > 0.6', () => {
    expect(isPromotionCandidate(e({ confidence: 0.7 }), { retrievals: 5, last_accessed_at: null })).toBe(true);
    expect(isPromotionCandidate(e({ confidence: 0.7 }), { retrievals: 4, last_accessed_at: null })).toBe(false);
    expect(isPromotionCandidate(e({ confidence: 0.6 }), { retrievals: 9, last_accessed_at: null })).toBe(false);
    expect(isPromotionCandidate(e({ section: 'decisions', confidence: 0.9 }), { retrievals: 9, last_accessed_at: null })).toBe(false);
  });
});

describe('fsrs6', () => {
  it("the default initial stability is ts-fsrs's own w[2]", async () => {
    const { generatorParameters } = await import('ts-fsrs');
    expect(DEFAULT_DECAY.fsrs6.stability_days).toBe(generatorParameters().w[2]);
  });
  it('is FSRS-6 power law: 0.9 at t = S, about 0.69 at 10 S, 0.5 only near 90 S; threshold 0.5', () => {
    expect(fsrsRetrievability(5, 5)).toBeCloseTo(0.9, 6);
    expect(fsrsRetrievability(50, 5)).toBeCloseTo(0.69, 2);
    expect(fsrsRetrievability(90 * 5, 5)).toBeGreaterThan(0.45);
    expect(fsrsRetrievability(90 * 5, 5)).toBeLessThan(0.55);
    const c = cfg({ curve: 'fsrs6', fsrs6: { stability_days: 2 } });
    expect(lifecycleOf(e(), undefined, c, T0 + 20 * D).forget).toBe(false);
    expect(lifecycleOf(e(), undefined, c, T0 + 400 * D).forget).toBe(true);
  });
  it('reinforce uses FSRS stability growth and records the review', () => {
    const c = cfg({ curve: 'fsrs6' });
    const lc = reinforceLifecycle(e(), c, T0 + 3 * D);
    expect(lc.stability! / 24).toBeGreaterThan(DEFAULT_DECAY.fsrs6.stability_days);
    expect(lc.difficulty).toBeGreaterThan(0);
    expect(lc.reviewed_at).toBe(new Date(T0 + 3 * D).toISOString());
    expect(lifecycleOf(e({ lifecycle: lc }), undefined, c, T0 + 3 * D).strength).toBe(1);
  });
});

describe('configuration', () => {
  it('per-section and per-memory-type overrides, per-project isolation by value', () => {
    const c = overlay(DEFAULT_DECAY, {
      curve: 'periodic',
      sections: { state: { curve: 'exponential', exponential: { stability_hours: 12 } } },
      memory_types: { procedural: { forget_threshold: 0.3 } },
    });
    expect(configFor(c, 'state', 'episodic')).toMatchObject({ curve: 'exponential', exponential: { stability_hours: 12 } });
    expect(configFor(c, 'observations', 'episodic').curve).toBe('periodic');
    expect(configFor(c, 'learnings', 'procedural').forget_threshold).toBe(0.3);
    const reinforced = reinforceLifecycle(e(), overlay(DEFAULT_DECAY, { curve: 'exponential' }), T0);
    expect(reinforced.stability).toBe(48);
  });
  it('initial importance grows with length, technical terms and weighty kinds (004)', () => {
    const small = initialImportance({ summary: 'x', content: 'y', kind: 'other' });
    const big = initialImportance({ summary: 'Decision on database schema migration', content: 'api cache retry timeout '.repeat(30), kind: 'decision' });
    expect(big).toBeGreaterThan(small);
    expect(big).toBeLessThanOrEqual(0.9);
  });
  it('initial importance is the formula of 004 whatever the text (counting stops where the score does)', () => {
    // The formula as written: every word and every distinct technical term counted.
    const reference = (x: { summary: string; content: string; kind: string }): number => {
      const text = `${x.summary} ${x.content}`;
      const words = text.split(/\s+/).filter(Boolean).length;
      const tech = new Set(
        (
          text.match(
            /\b(?:api|database|schema|migration|deploy|config|error|incident|latency|security|auth|token|cache|index|queue|retry|timeout|rollback|invariant|contract|version|release)\b/gi,
          ) ?? []
        ).map((t) => t.toLowerCase()),
      ).size;
      const kind =
        { decision: 0.2, invariant: 0.2, requirement: 0.15, incident: 0.15, runbook_step: 0.1, metric: 0.05, hypothesis: 0, other: 0.05 }[x.kind] ?? 0;
      return Math.round(Math.min(0.9, 0.2 + Math.min(0.3, words / 400) + Math.min(0.2, tech * 0.04) + kind) * 100) / 100;
    };
    const vocab = ['api', 'Cache', 'RETRY', 'token', 'word', 'x', 'schema-migration', 'the', '\u00a0', '\u3000', '\n', '  ', 'deploy.', 'indexes'];
    let seed = 7;
    const rand = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let round = 0; round < 300; round++) {
      const text = (n: number): string => Array.from({ length: n }, () => vocab[Math.floor(rand() * vocab.length)]).join(rand() < 0.5 ? ' ' : '');
      const x = {
        summary: text(Math.floor(rand() * 40)),
        content: text(Math.floor(rand() * 400)),
        kind: ['decision', 'metric', 'other', 'hypothesis'][round % 4]!,
      };
      expect(initialImportance(x)).toBe(reference(x));
    }
  });
});
