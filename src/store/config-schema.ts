/**
 * The zod schema of `config.yaml`, loaded only when a config file has to be parsed (the resolved
 * config is cached by file stamp, so most commands never load zod or yaml for it).
 */
import { z } from 'zod';

export const ProjectConfigSchema = z
  .object({
    project: z.string(),
    created_at: z.string(),
    git: z.object({ autoCommit: z.boolean().default(true) }).strict().default({ autoCommit: true }),
    query: z
      .object({
        /** A query slower than this logs a performance warning (Req 11.2). */
        slow_ms: z.number().positive().default(200),
      })
      .strict()
      .default({ slow_ms: 200 }),
  })
  .passthrough();
export type ProjectConfig = z.infer<typeof ProjectConfigSchema>;
