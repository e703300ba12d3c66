/** The zod schema of `config.yaml` (each setting: docs/configuration.md), loaded only when a config file has to be parsed. */
import { z } from 'zod';

const group = <T extends z.ZodRawShape>(shape: T) => z.object(shape).partial().strict().optional();

const curve = z.enum(['exponential', 'half-life', 'periodic', 'fsrs6']);
const curveParams = {
  exponential: group({ stability_hours: z.number().positive() }),
  half_life: group({
    function: z.enum(['exponential', 'linear', 'step']),
    half_life_days: z.number().min(1).max(365),
    min_importance: z.number().min(0).max(0.5),
    access_weight: z.number().min(0).max(1),
  }),
  periodic: group({
    base_rate: z.number().gt(0).lt(1),
    max_rate: z.number().gt(0).max(1),
    period_days: z.number().positive(),
    floor: z.number().min(0).max(1),
  }),
  fsrs6: group({ stability_days: z.number().positive() }),
};
const override = z.object({ curve: curve.optional(), forget_threshold: z.number().min(0).max(1).optional(), ...curveParams }).strict();
// The decay block: an override's settings, and the project-wide ones.
const DecaySchema = override.extend({
  forget_action: z.enum(['archive', 'delete']).optional(),
  interval: z
    .string()
    .regex(/^\d+(?:\.\d+)?\s*(?:m|h|d|w)$/, 'must look like 30m, 1h, 24h, 7d or 2w')
    .optional(),
  batch_size: z.number().int().min(1).optional(),
  archive_below_importance: z.number().min(0).max(1).optional(),
  retention_days: z.number().positive().optional(),
  sections: z.partialRecord(z.enum(['decisions', 'state', 'observations', 'learnings']), override).optional(),
  memory_types: z.partialRecord(z.enum(['semantic', 'episodic', 'procedural']), override).optional(),
});

export const ProjectConfigSchema = z
  .object({
    project: z.string(),
    created_at: z.string(),
    git: z
      .object({ autoCommit: z.boolean().default(true) })
      .strict()
      .default({ autoCommit: true }),
    commit: group({ hooks: z.enum(['none', 'run']) }),
    query: z
      .object({
        slow_ms: z.number().positive().default(200),
        semantic: z.enum(['auto', 'on', 'off']).optional(),
      })
      .strict()
      .default({ slow_ms: 200 }),
    /** docs/lifecycle.md; defaults in src/core/lifecycle.ts. */
    decay: DecaySchema.optional(),
    context: group({ budget: z.number().int().min(500) }),
    compact: group({ summarize_at: z.number().int().min(2) }),
    logging: group({ query_text: z.boolean() }),
  })
  .passthrough();
export type ProjectConfig = z.infer<typeof ProjectConfigSchema>;
