/**
 * Every use case a front end calls, by the name the public API gives it: each one takes the
 * engine and the caller first, `(engine, caller, …)`. The CLI and the MCP tools call these;
 * MemoryService binds them to one engine and caller (memory-service.ts).
 */
export { prepareTask } from './ops/agents.js';
export { create, apply, appliedOne, supersede, deprecate, applyResult } from './ops/apply.js';
export { stopReminder } from './ops/capture.js';
export { validate, doctor, checkFreshness } from './ops/checks.js';
export { fixConflicts, fixLinks } from './ops/conflicts.js';
export { compactPlan, applyPlan, log } from './ops/consolidation.js';
export { renderContext, syncContext } from './ops/context-docs.js';
export { decayState, decay } from './ops/decay.js';
export { memoryDiff as diff } from './ops/diff.js';
export { locate, show, history, recordDelivered } from './ops/entries.js';
export { validateEvidence } from './ops/evidence.js';
export { extract } from './ops/extraction.js';
export { exportEntries, importEntries } from './ops/interchange.js';
export { reinforce, promote, restore, link, related } from './ops/lifecycle.js';
export { query, logQuery, slowQueryMs } from './ops/query.js';
export { init, removeProject, registerMergeDriver, sync } from './ops/repo.js';
export { remember, sessionHits, sessionEnd } from './ops/sessions.js';
export { setup } from './ops/setup.js';
export { getStatistics } from './ops/statistics.js';
export { semanticFor, semanticStatus } from './semantic.js';
export { recoverPending as recoverJournal } from './transaction.js';
