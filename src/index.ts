/** The public TypeScript API of bass-agents memory. */
export { MemoryService, type ServiceOptions } from './service/memory-service.js';
export type { ApplyResult } from './service/ops/apply.js';
export type { EntryVersion, ShownEntry } from './service/ops/entries.js';
export type { QueryHit, QueryResult } from './service/ops/query.js';
export * from './core/schema.js';
export { validateEntryInput, validateUpdate, validateStoredEntry, validateDocument } from './core/validate.js';
export type { QueryFilters } from './core/query.js';
export type { Statistics } from './core/stats.js';
export { MemoryError, ValidationError, ConflictError, UsageError, NotFoundError, BusyError } from './core/errors.js';
