/** The public TypeScript API of bass-agents memory. */
export { MemoryService } from './service/memory-service.js';
export type { ServiceOptions, ApplyResult, QueryResult, QueryHit, ShownEntry, EntryVersion } from './service/memory-service.js';
export * from './core/schema.js';
export { validateEntryInput, validateUpdate, validateStoredEntry, validateDocument } from './core/validate.js';
export type { QueryFilters } from './core/query.js';
export type { Statistics } from './core/stats.js';
export { MemoryError, ValidationError, ConflictError, UsageError, NotFoundError, BusyError } from './core/errors.js';
