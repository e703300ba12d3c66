/** Read commands: list, query, show, prepare-task. */
import * as uc from '../../service/use-cases.js';
import { entryLines, orderEntry } from '../../core/entry.js';
import { UsageError } from '../../core/errors.js';
import { shown } from '../../core/redact.js';
import type { MemoryEntry } from '../../core/schema.js';
import { hitJson, type QueryHit } from '../../core/query.js';
import { parseFilters } from '../../core/filters.js';
import { type Args, clip, type Cli, type Command, FILTERS, JSON_FILE } from '../io.js';

type A = Args & { limit?: number; offset?: number };

async function runQuery(k: Cli, a: A, text: string, record = true): Promise<{ hits: QueryHit[]; matched: number }> {
  const [engine, caller] = k.open(a);
  const filters = parseFilters(a, caller.now());
  filters.projects = caller.readProjects(engine, a.project);
  if (a.offset !== undefined && (!Number.isInteger(a.offset) || a.offset < 0)) throw new UsageError(`offset must be a whole number (got ${shown(a.offset)})`);
  const options = { limit: a.limit, offset: a.offset, includeRelated: Boolean(a['include-related']), record: record && caller.records };
  // A daemon (a watched engine) answers from what its watcher keeps current, with the model it started, if any.
  const fromDaemon = engine.watched;
  const semantic = await uc.semanticFor(engine, caller, text, Boolean(a.semantic) && !fromDaemon);
  const r = uc.query(engine, caller, text, filters, { ...options, semantic, ...(fromDaemon ? { refresh: false } : {}) });
  if (!fromDaemon && a.semantic) {
    const st = uc.semanticStatus(engine);
    if (!st || st.state === 'unavailable' || st.state === 'failed')
      k.warn(`semantic search is not available (${st?.error ?? 'the embedding table could not be loaded'}); the results are lexical`);
    else if (st.vectors_current < st.entries)
      k.warn(
        `${st.entries - st.vectors_current} of ${st.entries} entries have no vector yet and were ranked by their words only; a running daemon computes them (bass-agents memory daemon start)`,
      );
  }
  const slow = uc.slowQueryMs(engine, caller, a.project);
  if (r.stats.execution_ms > slow)
    k.warn(`slow query: ${r.stats.execution_ms} ms (threshold ${slow} ms, config query.slow_ms); ${r.stats.entries_scanned} entries scanned`);
  if (a.debug) {
    const s = r.stats;
    const idx = s.index
      ? `, index: ${s.index.loaded_snapshot ? 'snapshot loaded' : 'built'} (+${s.index.added} ~${s.index.replaced} -${s.index.removed})${s.index.partial ? ', only the postings this text reaches' : ''}${s.index.current ? ', built from exactly these entries' : ''}${s.index.files_since !== undefined ? `, synced by the ${s.index.files_since} files changed since it was saved` : ''}`
      : '';
    k.err(
      `debug: ${fromDaemon ? 'answered by the daemon, ' : ''}execution time ${s.execution_ms} ms, entries scanned ${s.entries_scanned}, matched filters ${s.entries_matched_filters}, entries returned ${s.entries_returned}, semantic search ${s.semantic ? 'on' : 'off'}${idx}`,
    );
    for (const [id, by] of s.linked ?? []) k.err(`debug: ${id} raised by a link from ${by} (related_entries or superseded_by)`);
  }
  if (caller.records) uc.logQuery(engine, caller, { text, filters, result_count: r.results.length, execution_ms: r.stats.execution_ms });
  return { hits: r.results, matched: r.stats.entries_matched_filters };
}

function renderHits(k: Cli, hits: QueryHit[], a: A, withScore: boolean, matched = hits.length): void {
  if (a.json) return k.printJson(hits.map((h) => hitJson(h, Boolean(a['summary-only']))));
  if (hits.length === 0)
    return k.out('no entries match (defaults: status active, confidence >= 0.6, valid now; see --status any, --min-confidence 0, --include-expired)');
  if (a['summary-only']) {
    for (const h of hits) k.out(`${h.entry.id}  ${h.entry.kind}  ${h.entry.subject}  ${h.entry.scope}  ${h.entry.confidence.toFixed(2)}  ${h.entry.summary}`);
    return;
  }
  const rows = hits.map((h) => {
    const flags = [...h.flags, ...(h.related_to ? [`related to ${h.related_to}`] : [])];
    return [
      h.entry.id,
      h.entry.updated_at.slice(0, 19).replace('T', ' '),
      h.entry.section,
      h.entry.kind,
      h.entry.subject,
      h.entry.scope,
      h.entry.confidence.toFixed(2),
      ...(withScore ? [h.score.toFixed(3)] : []),
      clip(h.entry.summary, 80) + (flags.length ? `  [${flags.join(', ')}]` : ''),
    ];
  });
  const header = ['ID', 'UPDATED', 'SECTION', 'KIND', 'SUBJECT', 'SCOPE', 'CONF', ...(withScore ? ['SCORE'] : []), 'SUMMARY'];
  k.table(rows, header);
  // Never a silent cap: say how many more matched (at most 50 are listed).
  const listed = hits.filter((h) => !h.related_to).length;
  const offset = Number(a.offset ?? 0);
  const rest = matched - offset - listed;
  if (rest > 0) k.err(`${rest} more match; the next page: --offset ${offset + listed} (or narrow the filters; at most 50 per page)`);
}

function changedFields(a: MemoryEntry | null, b: MemoryEntry | null): string[] {
  if (!a || !b) return [];
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]) as Set<keyof MemoryEntry>;
  return [...keys].filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]));
}

export const readCommands: Command[] = [
  {
    cmd: 'list [project]',
    describe: 'list entries (same filters as query, no text), highest confidence first',
    options: { ...FILTERS, 'summary-only': { type: 'boolean' }, 'include-related': { type: 'boolean' }, debug: { type: 'boolean' } },
    async run(k, a: A) {
      const { hits, matched } = await runQuery(k, a, '', false); // browsing is not a retrieval
      renderHits(k, hits, a, false, matched);
    },
  },
  {
    cmd: 'query <text>',
    describe: 'search memory: filters first, then relevance weighed by confidence, evidence quality, recency and freshness',
    options: {
      ...FILTERS,
      'summary-only': { type: 'boolean', describe: 'only id, summary, subject, scope, kind, confidence' },
      'include-related': { type: 'boolean', describe: 'follow related_entries' },
      debug: { type: 'boolean', describe: 'print execution time and counts to stderr' },
      semantic: {
        type: 'boolean',
        describe: 'without a daemon, load the embedding model here to rank by meaning too (~1.5 s); a running daemon always does',
      },
      session: { type: 'string', describe: 'also the unexpired short-term memories of this session (first, flagged short_term)' },
    },
    async run(k, a: A) {
      const [engine, caller] = k.open(a);
      const { hits, matched } = await runQuery(k, a, String(a.text ?? ''));
      const session = a.session ? uc.sessionHits(engine, caller, String(a.session), String(a.text ?? '')) : [];
      if (session.length && a.json) {
        const st = session.map((e) => ({
          id: e.id,
          summary: e.summary,
          content: e.content,
          subject: e.subject,
          tags: e.tags,
          created_at: e.created_at,
          expires_at: e.expires_at,
          meta: { short_term: true, session: a.session, importance: e.importance, project: e.project },
        }));
        return k.printJson([...st, ...hits.map((h) => hitJson(h, Boolean(a['summary-only'])))]);
      }
      for (const e of session) k.out(`[short-term, expires ${e.expires_at.slice(0, 16).replace('T', ' ')}] ${e.id}  ${clip(e.summary, 90)}`);
      renderHits(k, hits, a, true, matched);
    },
  },
  {
    cmd: 'show <id>',
    describe: 'every field of an entry (--history: its versions from git)',
    options: { history: { type: 'boolean', describe: 'list every committed version' } },
    async run(k, a) {
      const [engine, caller] = k.open(a);
      const id = String(a.id);
      if (a.history) {
        const versions = await uc.history(engine, caller, id, { project: a.project });
        if (a.json) return k.printJson(versions);
        if (versions.length === 0) return k.out(`${id} has no committed history (not in a git repository, or not committed yet)`);
        for (const v of versions) {
          // Against the first parent's version, not the line below (maybe another branch's).
          const older = v.before;
          const changed = older ? changedFields(older, v.entry).filter((k) => k !== 'updated_at') : [];
          const what =
            v.entry === null ? 'removed' : older ? `${v.merge ? 'merged' : 'changed'}: ${changed.join(', ') || '(nothing but updated_at)'}` : 'created';
          k.out(`${v.date}  ${v.commit.slice(0, 12)}  ${v.author}  ${what}${v.entry ? `  [status ${v.entry.status}]` : ''}\n    ${v.subject}`);
        }
        return;
      }
      const s = uc.show(engine, caller, id, { project: a.project });
      if (a.json) return k.printJson({ ...s.entry, computed: s.computed });
      const c = s.computed;
      k.out([
        ...entryLines({ project: s.project, file: s.file, ...orderEntry(s.entry) }),
        `${'computed'.padEnd(16)}strength ${c.strength}, effective confidence ${c.effective_confidence} (${c.confidence_label}), retrievals ${c.retrieval_count}, flags: ${c.flags.length ? c.flags.join(', ') : 'none'}`,
      ]);
    },
  },
  {
    cmd: 'prepare-task [project]',
    describe: 'fill memory_context of an AgentTask JSON (when memory_enabled is true) and print it',
    options: {
      file: { ...JSON_FILE, describe: 'AgentTask JSON file, or - for stdin' },
      full: { type: 'boolean', describe: 'include full content (default: summaries)' },
    },
    run(k, a) {
      const task = k.readJsonInput(a.file as string | undefined);
      const [engine, caller] = k.open(a);
      const options = { project: (a.project as string) || undefined, full: Boolean(a.full), ...(engine.watched ? { refresh: false } : {}) };
      k.printJson(uc.prepareTask(engine, caller, task, options));
    },
  },
];
