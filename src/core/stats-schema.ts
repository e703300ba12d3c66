/**
 * The Statistics document as a zod schema: `schemas/statistics.schema.json` is
 * generated from it, and tests validate `memory stats --json` against that file.
 */
import { z } from 'zod';
import { EVIDENCE_TYPES, KINDS, SECTIONS, STATUSES } from './constants.js';
import { CONFIDENCE_BUCKETS } from './stats.js';

const count = z.number().int().min(0);
const counts = <K extends string>(keys: readonly K[]) => z.object(Object.fromEntries(keys.map((k) => [k, count])) as Record<K, typeof count>).strict();
const series = z.array(z.object({ date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/), count }).strict());
const nullableTime = z.string().nullable();

export const StatisticsSchema = z
  .object({
    project: z.string().nullable().describe('the project, or null for all projects'),
    date_range: z.object({ start_date: nullableTime, end_date: nullableTime }).strict(),
    total_entries: count,
    entries_by_section: counts(SECTIONS),
    entries_by_status: counts(STATUSES),
    entries_by_kind: counts(KINDS),
    avg_confidence: z.number().min(0).max(1),
    confidence_distribution: counts(CONFIDENCE_BUCKETS),
    entries_created_over_time: series,
    entries_superseded_over_time: series,
    evidence_type_distribution: counts(EVIDENCE_TYPES),
    low_confidence_count: count,
    stale_evidence_count: count,
    entries_by_agent: z.record(z.string(), count),
    most_active_agents: z.array(z.object({ agent: z.string(), count }).strict()).max(10),
    recent_operations: z.array(z.object({ time: z.string(), op: z.string(), id: z.string(), project: z.string(), agent: z.string() }).passthrough()).max(20),
    most_queried_subjects: z.array(z.object({ subject: z.string(), count }).strict()).max(10),
    most_queried_scopes: z.array(z.object({ scope: z.string(), count }).strict()).max(10),
    query_frequency_over_time: series,
    superseded_percentage: z.number().min(0).max(100),
    entries_approaching_expiry: z.array(z.object({ id: z.string(), subject: z.string(), valid_to: z.string(), days_left: z.number() }).strict()),
    compaction_candidates: z.object({ count, ids: z.array(z.string()) }).strict(),
  })
  .strict();
